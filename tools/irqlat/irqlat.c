// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqlat: a small benchmark VMM for device interrupts into a KVM guest.
 *
 * QEMU's edu PCI device is assigned through VFIO to a tiny guest that
 * raises the edu's interrupt itself (BAR0 is mapped into guest memory) and
 * times raise-to-ISR with its TSC, one interrupt at a time.  The VMM wires
 * that interrupt in one of several ways (MSI or level INTx; in-kernel or
 * split irqchip; injection and unmask in the kernel or in the VMM) and
 * counts VM exits, exits to userspace and host context switches around
 * the loop.  See Documentation/irqlat.rst.
 *
 * A benchmark, not a test: no figure is judged.  The exit code is 1 when
 * any interrupt was lost or doubled, 2 on a setup error, 4 when every
 * requested scenario was unavailable, else 0.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "irqlat.h"
#include "tap.h"

#define CSV_HEADER \
	"irq,irqchip,kernel,modules,n,lat_med_ns,lat_p99_ns,irqs_per_s," \
	"vmexits_per_irq,uexits_per_irq,ctxsw_per_irq,lost,doubled"

#define SAMPLES_HEADER	"irq,irqchip,kernel,modules,lat_ns"

#define DIAG_LINES	32
#define DIAG_LEN	200

/* Where each format goes; NULL: not wanted. */
struct sinks {
	FILE *text, *csv, *json, *samples;
	bool json_first;
};

static bool verbose;
static char diag_ring[DIAG_LINES][DIAG_LEN];
static unsigned int diag_next;

/*
 * The selftest libraries report through tap_diag()/tap_bail().  irqlat
 * keeps stdout for its table, so diagnostics go to stderr: at once with
 * -v, else only the last few when a scenario fails.
 */
void tap_diag_fmt(const char *fmt, ...)
{
	char *line = diag_ring[diag_next++ % DIAG_LINES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, DIAG_LEN, fmt, ap);
	va_end(ap);
	if (verbose)
		fprintf(stderr, "irqlat: %s\n", line);
}

void tap_bail_fmt(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "irqlat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void diag_dump(void)
{
	unsigned int i = diag_next > DIAG_LINES ? diag_next - DIAG_LINES : 0;

	if (verbose)
		return;
	for (; i < diag_next; i++)
		fprintf(stderr, "irqlat:   %s\n", diag_ring[i % DIAG_LINES]);
}

static void diag_reset(void)
{
	diag_next = 0;
}

/*
 * What of the kernel's tracing is on during this run, for the JSON: "off",
 * "unknown" (no tracefs), or what is on: enabled events (hist triggers
 * enable theirs too), kprobe/uprobe events, a tracer other than nop.  Any
 * of these lengthens the measured paths; report.py refuses such rows.
 */
static char tracing[256];

static void append_state(const char *fmt, const char *v)
{
	size_t len = strlen(tracing);

	snprintf(tracing + len, sizeof(tracing) - len, "%s", len ? ";" : "");
	len = strlen(tracing);
	snprintf(tracing + len, sizeof(tracing) - len, fmt, v);
}

static void read_tracing_state(void)
{
	char path[96], line[128], events[160] = "";
	const char *dir = "/sys/kernel/tracing";
	unsigned int probes = 0, i;
	FILE *f;

	if (access("/sys/kernel/tracing/events/enable", R_OK))
		dir = "/sys/kernel/debug/tracing";
	snprintf(path, sizeof(path), "%s/events/enable", dir);
	if (access(path, R_OK)) {
		snprintf(tracing, sizeof(tracing), "unknown");
		return;
	}
	snprintf(path, sizeof(path), "%s/set_event", dir);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strlen(events) + strlen(line) + 2 < sizeof(events))
			snprintf(events + strlen(events),
				 sizeof(events) - strlen(events), "%s%s",
				 events[0] ? "," : "", line);
		else if (!strstr(events, ",..."))
			strcat(events, ",...");
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/events/enable", dir);
	f = fopen(path, "re");
	if (f && fgets(line, sizeof(line), f) && line[0] != '0' && !events[0])
		snprintf(events, sizeof(events), "some");
	if (f)
		fclose(f);
	if (events[0])
		append_state("events=%s", events);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 i ? "uprobe_events" : "kprobe_events");
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			probes++;
		if (f)
			fclose(f);
	}
	snprintf(line, sizeof(line), "%u", probes);
	if (probes)
		append_state("probes=%s", line);
	snprintf(path, sizeof(path), "%s/current_tracer", dir);
	f = fopen(path, "re");
	if (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "nop"))
			append_state("tracer=%s", line);
	}
	if (f)
		fclose(f);
	if (!tracing[0])
		snprintf(tracing, sizeof(tracing), "off");
}

/* "6.12.118+deb12-rt-amd64" -> "6.12-rt"; "6.1.0-57-amd64" -> "6.1-generic" */
static void default_kernel_label(char *buf, size_t len)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;
	bool rt;
	FILE *f;
	int c;

	uname(&u);
	if (sscanf(u.release, "%u.%u", &major, &minor) != 2)
		major = 0;
	rt = strstr(u.release, "-rt");
	f = fopen("/sys/kernel/realtime", "re");
	if (f) {
		c = fgetc(f);
		rt = rt || c == '1';
		fclose(f);
	}
	snprintf(buf, len, "%u.%u-%s", major, minor, rt ? "rt" : "generic");
}

/* The kit's modules are out of tree: the taint flags say so. */
static const char *default_modules_label(void)
{
	char taint[32] = "";
	FILE *f;

	f = fopen("/sys/module/kvm/taint", "re");
	if (!f)
		return "unknown";
	if (!fgets(taint, sizeof(taint), f))
		taint[0] = '\0';
	fclose(f);
	return strchr(taint, 'O') ? "kit" : "stock";
}

static double per_irq(long long v, unsigned int n)
{
	return v < 0 || !n ? -1 : (double)v / n;
}

static double ctxsw_per_irq(const struct irqlat_result *r)
{
	if (!r->has_control || r->ctxt < 0 || r->ctl_ctxt < 0 || !r->n)
		return -1;
	return (double)(r->ctxt - r->ctl_ctxt) / r->n;
}

static double irqs_per_s(const struct irqlat_result *r)
{
	return r->wall_s > 0 ? r->delivered / r->wall_s : 0;
}

static void print_csv_row(FILE *f, const struct irqlat_result *r,
			  const char *kernel, const char *modules)
{
	fprintf(f, "%s,%s,%s,%s,%u,", irq_name(r->irq), chip_name(r->chip),
		kernel, modules, r->n);
	fprintf(f, "%.0f,%.0f,%.1f,", r->lat_med_ns, r->lat_p99_ns,
		irqs_per_s(r));
	fprintf(f, "%.2f,%.2f,%.2f,%u,%u\n", per_irq(r->vmexits, r->n),
		per_irq(r->uexits, r->n), ctxsw_per_irq(r), r->lost,
		r->doubled);
}

#define TEXT_COLS	"%-5s %-21s %-12s %-7s %6s %10s %10s %9s %8s %8s %8s %5s %7s\n"

/* One line per interrupt: the latency distribution behind the row. */
static void print_samples(FILE *f, const struct irqlat_result *r,
			  const char *kernel, const char *modules)
{
	u32 i;

	if (!r->tsc_khz)
		return;
	for (i = 0; i < r->nr_samples; i++)
		fprintf(f, "%s,%s,%s,%s,%.0f\n", irq_name(r->irq),
			chip_name(r->chip), kernel, modules,
			r->samples[i] * 1e6 / r->tsc_khz);
}

static void print_text_header(FILE *f)
{
	fprintf(f, TEXT_COLS, "irq", "irqchip", "kernel", "modules", "n",
		"lat_med_ns", "lat_p99_ns", "irqs/s", "vmexit/i", "uexit/i",
		"ctxsw/i", "lost", "doubled");
}

static void print_text_row(FILE *f, const struct irqlat_result *r,
			   const char *kernel, const char *modules)
{
	char n[16], med[16], p99[16], rate[16], vm[16], ue[16], cs[16];
	char lost[16], dbl[16];

	snprintf(n, sizeof(n), "%u", r->n);
	snprintf(med, sizeof(med), "%.0f", r->lat_med_ns);
	snprintf(p99, sizeof(p99), "%.0f", r->lat_p99_ns);
	snprintf(rate, sizeof(rate), "%.1f", irqs_per_s(r));
	snprintf(vm, sizeof(vm), "%.2f", per_irq(r->vmexits, r->n));
	snprintf(ue, sizeof(ue), "%.2f", per_irq(r->uexits, r->n));
	snprintf(cs, sizeof(cs), "%.2f", ctxsw_per_irq(r));
	snprintf(lost, sizeof(lost), "%u", r->lost);
	snprintf(dbl, sizeof(dbl), "%u", r->doubled);
	fprintf(f, TEXT_COLS, irq_name(r->irq), chip_name(r->chip), kernel,
		modules, n, med, p99, rate, vm, ue, cs, lost, dbl);
}

/* JSON members: the first of an object has no leading comma. */
#define JSTR(f, key, v)	fprintf(f, "\"%s\": \"%s\"", key, v)
#define JNUM(f, key, fmt, v)	fprintf(f, ", \"%s\": " fmt, key, v)

static void print_json_row(FILE *f, const struct irqlat_result *r,
			   const char *kernel, const char *modules, bool first)
{
	fprintf(f, "%s  {", first ? "" : ",\n");
	JSTR(f, "irq", irq_name(r->irq));
	fprintf(f, ", ");
	JSTR(f, "irqchip", chip_name(r->chip));
	fprintf(f, ", ");
	JSTR(f, "kernel", kernel);
	fprintf(f, ", ");
	JSTR(f, "modules", modules);
	fprintf(f, ", ");
	JSTR(f, "tracing", tracing);
	JNUM(f, "n", "%u", r->n);
	JNUM(f, "lat_med_ns", "%.0f", r->lat_med_ns);
	JNUM(f, "lat_p99_ns", "%.0f", r->lat_p99_ns);
	JNUM(f, "irqs_per_s", "%.1f", irqs_per_s(r));
	JNUM(f, "vmexits_per_irq", "%.3f", per_irq(r->vmexits, r->n));
	JNUM(f, "uexits_per_irq", "%.3f", per_irq(r->uexits, r->n));
	JNUM(f, "ctxsw_per_irq", "%.3f", ctxsw_per_irq(r));
	JNUM(f, "lost", "%u", r->lost);
	JNUM(f, "doubled", "%u", r->doubled);
	fprintf(f, ",\n   ");
	JSTR(f, "extra", "raw counts");
	JNUM(f, "raised", "%u", r->raised);
	JNUM(f, "delivered", "%u", r->delivered);
	JNUM(f, "stray", "%u", r->stray);
	JNUM(f, "signalled", "%lld", r->signalled);
	JNUM(f, "tsc_khz", "%u", r->tsc_khz);
	JNUM(f, "lat_med_cycles", "%llu", (unsigned long long)r->lat_med_cyc);
	JNUM(f, "lat_p99_cycles", "%llu", (unsigned long long)r->lat_p99_cyc);
	JNUM(f, "lat_min_cycles", "%llu", (unsigned long long)r->lat_min_cyc);
	JNUM(f, "lat_max_cycles", "%llu", (unsigned long long)r->lat_max_cyc);
	JNUM(f, "wall_s", "%.6f", r->wall_s);
	JNUM(f, "vmexits", "%lld", r->vmexits);
	JNUM(f, "halt_exits", "%lld", r->halt_exits);
	JNUM(f, "irq_exits", "%lld", r->irq_exits);
	JNUM(f, "uexits", "%lld", r->uexits);
	JNUM(f, "eoi_exits", "%lld", r->eoi_exits);
	JNUM(f, "ctxt", "%lld", r->ctxt);
	JNUM(f, "vcpu_ctxsw", "%lld", r->vcpu_ctxsw);
	if (r->has_control) {
		fprintf(f, ",\n   ");
		JSTR(f, "control", "same loop, no interrupt");
		JNUM(f, "ctl_wall_s", "%.6f", r->ctl_wall_s);
		JNUM(f, "ctl_ctxt", "%lld", r->ctl_ctxt);
		JNUM(f, "ctl_vcpu_ctxsw", "%lld", r->ctl_vcpu_ctxsw);
		JNUM(f, "ctl_vmexits", "%lld", r->ctl_vmexits);
		JNUM(f, "ctl_uexits", "%lld", r->ctl_uexits);
	}
	fprintf(f, "}");
}

static void print_json_skip(FILE *f, enum irqlat_irq irq,
			    enum irqlat_chip chip, const char *kernel,
			    const char *modules, const char *why, bool first)
{
	fprintf(f, "%s  {", first ? "" : ",\n");
	JSTR(f, "irq", irq_name(irq));
	fprintf(f, ", ");
	JSTR(f, "irqchip", chip_name(chip));
	fprintf(f, ", ");
	JSTR(f, "kernel", kernel);
	fprintf(f, ", ");
	JSTR(f, "modules", modules);
	fprintf(f, ", ");
	JSTR(f, "tracing", tracing);
	fprintf(f, ", ");
	JSTR(f, "skipped", why);
	fprintf(f, "}");
}

static int parse_list(const char *arg, const char * (*name)(unsigned int),
		      unsigned int count, unsigned int *mask)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned int i;

	if (!copy)
		return -ENOMEM;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*mask = (1u << count) - 1;
			continue;
		}
		for (i = 0; i < count; i++)
			if (!strcmp(tok, name(i)))
				break;
		if (i == count) {
			fprintf(stderr, "irqlat: unknown value '%s'\n", tok);
			free(copy);
			return -EINVAL;
		}
		*mask |= 1u << i;
	}
	free(copy);
	return *mask ? 0 : -EINVAL;
}

/* "none" (-1) or a CPU number. */
static int parse_cpu(const char *arg, int *cpu)
{
	char *end;
	long v;

	if (!strcmp(arg, "none")) {
		*cpu = -1;
		return 0;
	}
	v = strtol(arg, &end, 0);
	if (*end || v < 0 || v >= CPU_SETSIZE) {
		fprintf(stderr, "irqlat: bad CPU '%s'\n", arg);
		return -EINVAL;
	}
	*cpu = v;
	return 0;
}

/*
 * Defaults: the vCPU thread on the last CPU we may use, the device IRQ on
 * the same CPU (no cross-CPU wakeup), the I/O thread on another CPU if
 * there is one.  Fixed placement makes the counts repeatable.
 */
static void default_cpus(struct irqlat_opts *o)
{
	int first = -1, last = -1, other = -1, i;
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set)) {
		for (i = 0; i < CPU_SETSIZE; i++) {
			if (!CPU_ISSET(i, &set))
				continue;
			if (first < 0)
				first = i;
			last = i;
		}
	}
	if (o->vcpu_cpu == -2)
		o->vcpu_cpu = last;
	if (o->irq_cpu == -2)
		o->irq_cpu = o->vcpu_cpu;
	if (o->io_cpu == -2) {
		other = first != o->vcpu_cpu ? first : last;
		o->io_cpu = other;
	}
}

static const char *irq_name_u(unsigned int i)
{
	return irq_name(i);
}

static const char *chip_name_u(unsigned int i)
{
	return chip_name(i);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"Usage: irqlat [options]\n"
		"  --irq LIST         msi,intx or all (default all)\n"
		"  --irqchip LIST     kernel,split-user,split-userspace-only,\n"
		"                     split-kernel,split-kernel-noexit or all (default all)\n"
		"  -n, --count N      interrupts per scenario (default 500, max %u)\n"
		"  --csv | --json     machine-readable output (default: a text table)\n"
		"  --no-header        CSV rows only\n"
		"  --csv-file F, --json-file F  also write that format to F\n"
		"  --samples-file F   every latency sample (ns) as CSV to F\n"
		"  --kernel LABEL     kernel column (default from uname, e.g. 6.12-generic)\n"
		"  --modules LABEL    modules column (default: kit if kvm is out of tree)\n"
		"  --device BDF       the edu's PCI address (default: the first edu)\n"
		"  --no-control       skip the control run (no ctxsw_per_irq)\n"
		"  --guest MODE       halt (default): the guest waits for each interrupt\n"
		"                     in HLT; spin: busy, its vCPU in guest mode\n"
		"  --extra-irqfds N   N idle irqfds (GSI 10) in each VM (default 0, max 65536)\n"
		"  --cpu C            pin the vCPU thread (default: the last CPU)\n"
		"  --irq-cpu C        the device's host IRQ affinity (default: --cpu)\n"
		"  --io-cpu C         the I/O thread (default: another CPU)\n"
		"                     (C: a CPU number, or none to leave it alone)\n"
		"  --stall-ms MS      give up after MS without an interrupt (default 5000)\n"
		"  --quiet-ms MS      watch for extra interrupts after the last (default 200)\n"
		"  -v, --verbose      diagnostics on stderr as they happen\n",
		IRQLAT_MAX_SAMPLES);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "irq", required_argument, NULL, 'i' },
		{ "irqchip", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "csv", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "csv-file", required_argument, NULL, 'F' },
		{ "json-file", required_argument, NULL, 'G' },
		{ "samples-file", required_argument, NULL, 'S' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "modules", required_argument, NULL, 'm' },
		{ "device", required_argument, NULL, 'd' },
		{ "no-control", no_argument, NULL, 'N' },
		{ "guest", required_argument, NULL, 'g' },
		{ "extra-irqfds", required_argument, NULL, 'x' },
		{ "cpu", required_argument, NULL, 'P' },
		{ "irq-cpu", required_argument, NULL, 'I' },
		{ "io-cpu", required_argument, NULL, 'O' },
		{ "stall-ms", required_argument, NULL, 's' },
		{ "quiet-ms", required_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct irqlat_opts opts = {
		.n = 500, .stall_ms = 5000, .quiet_ms = 200, .control = true,
		.vcpu_cpu = -2, .irq_cpu = -2, .io_cpu = -2,
	};
	unsigned int irqs = (1u << NR_IRQ) - 1, chips = (1u << NR_CHIP) - 1;
	unsigned int ran = 0, skipped = 0, bad = 0, errors = 0;
	char kernel[64] = "", modules[64] = "", why[160];
	struct sinks out = { .text = stdout, .json_first = true };
	bool header = true;
	struct irqlat_result res;
	unsigned long v;
	char *end;
	FILE *f;
	int opt, i, c, ret;

	while ((opt = getopt_long(argc, argv, "n:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (parse_list(optarg, irq_name_u, NR_IRQ, &irqs))
				return 2;
			break;
		case 'c':
			if (parse_list(optarg, chip_name_u, NR_CHIP, &chips))
				return 2;
			break;
		case 'n':
		case 's':
		case 'q':
		case 'x':
			v = strtoul(optarg, &end, 0);
			if (*end || !*optarg || optarg[0] == '-' ||
			    (opt == 'n' && (v < 1 || v > IRQLAT_MAX_SAMPLES)) ||
			    (opt == 'x' && v > 65536) || v > 3600000) {
				fprintf(stderr, "irqlat: bad number '%s'\n", optarg);
				return 2;
			}
			if (opt == 'x')
				opts.extra_irqfds = v;
			else if (opt == 'n')
				opts.n = v;
			else if (opt == 's')
				opts.stall_ms = v ? v : 1;
			else
				opts.quiet_ms = v;
			break;
		case 'C':
			out.csv = stdout;
			out.text = NULL;
			break;
		case 'J':
			out.json = stdout;
			out.text = NULL;
			break;
		case 'F':
		case 'G':
		case 'S':
			f = fopen(optarg, "we");
			if (!f) {
				perror(optarg);
				return 2;
			}
			*(opt == 'F' ? &out.csv : opt == 'G' ? &out.json :
			  &out.samples) = f;
			break;
		case 'H':
			header = false;
			break;
		case 'k':
			snprintf(kernel, sizeof(kernel), "%s", optarg);
			break;
		case 'm':
			snprintf(modules, sizeof(modules), "%s", optarg);
			break;
		case 'd':
			setenv("EDU_BDF", optarg, 1);
			break;
		case 'N':
			opts.control = false;
			break;
		case 'g':
			if (strcmp(optarg, "halt") && strcmp(optarg, "spin")) {
				fprintf(stderr, "irqlat: --guest takes halt or spin, not '%s'\n",
					optarg);
				return 2;
			}
			opts.spin = optarg[0] == 's';
			break;
		case 'P':
		case 'I':
		case 'O':
			if (parse_cpu(optarg, opt == 'P' ? &opts.vcpu_cpu :
				      opt == 'I' ? &opts.irq_cpu : &opts.io_cpu))
				return 2;
			break;
		case 'v':
			verbose = true;
			opts.verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		print_usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	default_cpus(&opts);
	read_tracing_state();
	if (strcmp(tracing, "off"))
		fprintf(stderr, "irqlat: tracing is not off (%s): figures include its cost\n",
			tracing);
	if (!kernel[0])
		default_kernel_label(kernel, sizeof(kernel));
	if (!modules[0])
		snprintf(modules, sizeof(modules), "%s",
			 default_modules_label());

	if (out.csv && header)
		fprintf(out.csv, "%s\n", CSV_HEADER);
	if (out.text && opts.spin)
		fprintf(out.text, "guest: spins for each interrupt, no HLT (--guest spin)\n");
	if (out.text && opts.extra_irqfds)
		fprintf(out.text, "each VM has %u more irqfds, idle (--extra-irqfds)\n",
			opts.extra_irqfds);
	if (out.text)
		print_text_header(out.text);
	if (out.json)
		fprintf(out.json, "[\n");
	if (out.samples)
		fprintf(out.samples, "%s\n", SAMPLES_HEADER);

	for (i = 0; i < NR_IRQ; i++) {
		for (c = 0; c < NR_CHIP; c++) {
			if (!(irqs & (1u << i)) || !(chips & (1u << c)))
				continue;
			/* Resampling is for level INTx: no MSI rows. */
			if (i == IRQ_MSI && (c == CHIP_SPLIT_KERNEL ||
					     c == CHIP_SPLIT_KERNEL_NOEXIT))
				continue;
			diag_reset();
			why[0] = '\0';
			ret = irqlat_run(i, c, &opts, &res, why, sizeof(why));
			if (out.samples && !ret)
				print_samples(out.samples, &res, kernel,
					      modules);
			free(res.samples);
			res.samples = NULL;
			if (ret == -EOPNOTSUPP) {
				skipped++;
				fprintf(stderr, "irqlat: %s/%s: skipped: %s\n",
					irq_name(i), chip_name(c), why);
				if (out.json)
					print_json_skip(out.json, i, c, kernel,
							modules, why,
							out.json_first);
				out.json_first = false;
				continue;
			}
			if (ret) {
				errors++;
				fprintf(stderr, "irqlat: %s/%s: failed: %s\n",
					irq_name(i), chip_name(c),
					strerror(-ret));
				diag_dump();
				continue;
			}
			ran++;
			if (res.lost || res.doubled) {
				bad++;
				fprintf(stderr,
					"irqlat: %s/%s: raised %u, delivered %u, signalled %lld: %u lost, %u doubled\n",
					irq_name(i), chip_name(c), res.raised,
					res.delivered, res.signalled, res.lost,
					res.doubled);
				diag_dump();
			}
			if (res.stray)
				fprintf(stderr,
					"irqlat: %s/%s: %u ISR run(s) that no LAPIC delivered (interrupts were off, or the vector not in service; the last at 0x%x): the CPU's event delivery, not KVM's irqchip; not counted as doubled (Documentation/testing.rst)\n",
					irq_name(i), chip_name(c), res.stray,
					res.stray_eip);
			if (out.csv)
				print_csv_row(out.csv, &res, kernel, modules);
			if (out.text)
				print_text_row(out.text, &res, kernel, modules);
			if (out.json)
				print_json_row(out.json, &res, kernel, modules,
					       out.json_first);
			out.json_first = false;
			fflush(NULL);
		}
	}
	if (out.json)
		fprintf(out.json, "%s]\n", out.json_first ? "" : "\n");
	if (out.csv && out.csv != stdout)
		fclose(out.csv);
	if (out.json && out.json != stdout)
		fclose(out.json);
	if (out.samples)
		fclose(out.samples);

	if (errors)
		return 2;
	if (bad)
		return 1;
	return !ran && skipped ? 4 : 0;
}
