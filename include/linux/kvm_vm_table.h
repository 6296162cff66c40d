/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-VM data of the kit's own files in kvm.ko, found by the struct kvm
 * pointer (virt/kvm/kvm_vm_table.c).  Not a field of struct kvm or
 * struct kvm_arch: changing those would change the CRCs of the symbols that
 * stock modules import from kvm.ko.  An xarray keyed by the pointer walks
 * 11 levels per lookup; this is one hash bucket.
 */
#ifndef __LINUX_KVM_VM_TABLE_H
#define __LINUX_KVM_VM_TABLE_H

#include <linux/hashtable.h>
#include <linux/rcupdate.h>

struct kvm;

/* Embedded in the user's per-VM struct. */
struct kvm_vm_entry {
	struct hlist_node node;
	struct kvm *kvm;
	struct rcu_head rcu;
};

#define KVM_VM_TABLE_BITS	8

struct kvm_vm_table {
	DECLARE_HASHTABLE(head, KVM_VM_TABLE_BITS);
};

#define DEFINE_KVM_VM_TABLE(table)	struct kvm_vm_table table

struct kvm_vm_entry *kvm_vm_table_find(struct kvm_vm_table *t,
				       struct kvm *kvm);
struct kvm_vm_entry *kvm_vm_table_insert(struct kvm_vm_table *t,
					 struct kvm *kvm,
					 struct kvm_vm_entry *e);
struct kvm_vm_entry *kvm_vm_table_remove(struct kvm_vm_table *t,
					 struct kvm *kvm);

#endif /* __LINUX_KVM_VM_TABLE_H */
