# SPDX-License-Identifier: GPL-2.0-only
#
# libkvm-irqbypass: the KVM, VFIO, TAP and /proc helpers and the guest code
# that irqlat, lifecycle and the selftests link.  Include this first: it
# sets OUTPUT (make OUTPUT=dir, default: the including directory; a
# relative one is taken from there), the flags every user builds with, and
# $(LIBKVM_IRQBYPASS), built from objects in $(OUTPUT)/libkvm-irqbypass/.
# The default goal stays the including Makefile's "all".

.DEFAULT_GOAL := all

SRCDIR := $(CURDIR)
ifeq ($(OUTPUT),)
OUTPUT := $(SRCDIR)
endif
override OUTPUT := $(abspath $(OUTPUT))

LIBKVM_IRQBYPASS_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
LIBKVM_IRQBYPASS_TOP := $(abspath $(LIBKVM_IRQBYPASS_DIR)/../../..)
LIBKVM_IRQBYPASS_OUT := $(OUTPUT)/libkvm-irqbypass
LIBKVM_IRQBYPASS := $(OUTPUT)/libkvm-irqbypass.a

LIBKVM_IRQBYPASS_OBJS := $(addprefix $(LIBKVM_IRQBYPASS_OUT)/,kvm_util_lite.o \
	vfio_util_lite.o proc_util.o tap.o guest_code.o)
LIBKVM_IRQBYPASS_HDRS := $(wildcard $(LIBKVM_IRQBYPASS_DIR)/include/*.h) \
	$(LIBKVM_IRQBYPASS_TOP)/include/uapi/linux/kvm_kit.h

LIBKVM_IRQBYPASS_INC := -I$(LIBKVM_IRQBYPASS_DIR)/include \
	-I$(LIBKVM_IRQBYPASS_TOP)/include/uapi
CFLAGS ?= -O2
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE $(LIBKVM_IRQBYPASS_INC)
# The guest code is .code32 inside the 64-bit binary; it has no
# relocations, so a PIE link is fine.
ASFLAGS += -Wa,--fatal-warnings $(LIBKVM_IRQBYPASS_INC)
# vCPUs run on threads of their own.
LDLIBS += -pthread

$(LIBKVM_IRQBYPASS_OUT):
	mkdir -p $@

$(LIBKVM_IRQBYPASS_OUT)/%.o: $(LIBKVM_IRQBYPASS_DIR)/%.c \
		$(LIBKVM_IRQBYPASS_HDRS) | $(LIBKVM_IRQBYPASS_OUT)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIBKVM_IRQBYPASS_OUT)/%.o: $(LIBKVM_IRQBYPASS_DIR)/%.S \
		$(LIBKVM_IRQBYPASS_HDRS) | $(LIBKVM_IRQBYPASS_OUT)
	$(CC) $(ASFLAGS) -c -o $@ $<

$(LIBKVM_IRQBYPASS): $(LIBKVM_IRQBYPASS_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

libkvm-irqbypass-clean:
	rm -f $(LIBKVM_IRQBYPASS) $(LIBKVM_IRQBYPASS_OBJS)

.PHONY: libkvm-irqbypass-clean
