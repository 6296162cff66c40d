// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-VM data of the kit's own files, keyed by the struct kvm pointer
 * (include/linux/kvm_vm_table.h).  Lookups are lockless under RCU, from a
 * VM's own ioctls and vCPU threads; entries are inserted and removed in
 * process context under one spinlock for all tables (VMs come and go
 * rarely), and freed by their owner after a grace period, since other
 * VMs' lookups may walk the same bucket.
 */
#include <linux/kvm_vm_table.h>
#include <linux/lockdep.h>
#include <linux/spinlock.h>

static DEFINE_SPINLOCK(kvm_vm_tables_lock);

/* Under rcu_read_lock() or kvm_vm_tables_lock. */
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
 * kvm_vm_table_find - the entry of @kvm
 * @t: the table
 * @kvm: the VM
 *
 * Any context; walks the bucket under rcu_read_lock().  The entry stays
 * valid for as long as its owner keeps it (for both users: until the VM is
 * destroyed, so for the VM's own ioctls and vCPUs), not only inside the
 * read-side section.
 *
 * Return: the entry, or NULL.
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
 *
 * Process or atomic context; takes kvm_vm_tables_lock.
 *
 * Return: NULL if @e was added, else the entry @kvm already has (@e is
 * then the caller's to free).
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
 *
 * Process or atomic context; takes kvm_vm_tables_lock.  The caller frees
 * the entry after a grace period (kfree_rcu() or kvfree_rcu() on its @rcu).
 *
 * Return: the entry, or NULL if @kvm had none.
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
