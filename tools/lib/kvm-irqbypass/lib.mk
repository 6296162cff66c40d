# SPDX-License-Identifier: GPL-2.0-only
#
# libkvm-irqbypass: the KVM, VFIO, TAP and /proc helpers and the guest code
# that irqlat, lifecycle and the selftests link.  Include this after OUTPUT
# is set (absolute); it adds its include paths to CFLAGS and ASFLAGS and
# builds $(LIBKVM_IRQBYPASS) from objects in $(OUTPUT)/libkvm-irqbypass/.

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
CFLAGS += $(LIBKVM_IRQBYPASS_INC)
ASFLAGS += $(LIBKVM_IRQBYPASS_INC)

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
