// SPDX-License-Identifier: GPL-2.0-only
#include <linux/kvm_vm_table.h>
#include <linux/lockdep.h>
#include <linux/spinlock.h>

static DEFINE_SPINLOCK(kvm_vm_tables_lock);

/* Under rcu_read_lock() or kvm_vm_tables_lock, which the updaters take. */
static struct kvm_vm_entry *__kvm_vm_table_find(struct kvm_vm_table *t,
						struct kvm *kvm)
{
	struct kvm_vm_entry *e;

	hash_for_each_possible_rcu(t->head, e, node, (unsigned long)kvm,
				   lockdep_is_held(&kvm_vm_tables_lock))
		if (e->kvm == kvm)
			return e;
	return NULL;
}

/**
 * kvm_vm_table_find - the entry of @kvm, in any context (under RCU)
 * @t: the table
 * @kvm: the VM
 * Return: the entry, valid as long as its owner keeps it, or NULL.
 */
struct kvm_vm_entry *kvm_vm_table_find(struct kvm_vm_table *t,
				       struct kvm *kvm)
{
	struct kvm_vm_entry *e;

	rcu_read_lock();
	e = __kvm_vm_table_find(t, kvm);
	rcu_read_unlock();
	return e;
}

/**
 * kvm_vm_table_insert - add @e as the entry of @kvm unless it has one
 * @t: the table
 * @kvm: the VM
 * @e: the new entry, not in any table
 * Return: NULL if @e was added, else @kvm's entry (@e is then the caller's).
 */
struct kvm_vm_entry *kvm_vm_table_insert(struct kvm_vm_table *t,
					 struct kvm *kvm,
					 struct kvm_vm_entry *e)
{
	struct kvm_vm_entry *cur;

	spin_lock(&kvm_vm_tables_lock);
	cur = __kvm_vm_table_find(t, kvm);
	if (!cur) {
		e->kvm = kvm;
		hash_add_rcu(t->head, &e->node, (unsigned long)kvm);
	}
	spin_unlock(&kvm_vm_tables_lock);
	return cur;
}

/**
 * kvm_vm_table_remove - take the entry of @kvm out of @t
 * @t: the table
 * @kvm: the VM
 * Return: the entry, for the caller to free after a grace period, or NULL.
 */
struct kvm_vm_entry *kvm_vm_table_remove(struct kvm_vm_table *t,
					 struct kvm *kvm)
{
	struct kvm_vm_entry *e;

	spin_lock(&kvm_vm_tables_lock);
	e = __kvm_vm_table_find(t, kvm);
	if (e)
		hash_del_rcu(&e->node);
	spin_unlock(&kvm_vm_tables_lock);
	return e;
}
