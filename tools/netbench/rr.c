// SPDX-License-Identifier: GPL-2.0-only
/*
 * rr: a TCP request/response benchmark in the shape of netperf's TCP_RR
 * (netperf is not in Debian's main archive): one connection, a 1-byte
 * request, a 1-byte response, one transaction in flight, TCP_NODELAY.
 *
 *   rr server [-p PORT] [-1] [-s NAME=PATH[:KEY]]...
 *   rr stat NAME=PATH[:KEY]...
 *   rr client -H ADDR [-p PORT] [-w WARMUP] [-n COUNT] [-r REPS]
 *             [-t TIMEOUT_S]
 *
 * The client opens with a hello (magic, warmup, count, reps; 16 bytes,
 * network order) which the server acknowledges, then runs WARMUP
 * transactions and REPS repetitions of COUNT transactions.  Each request
 * carries a sequence byte and the response must be that byte's complement,
 * so a reordered, lost or stale byte stops the run instead of being timed.
 *
 * Both ends time every repetition on CLOCK_MONOTONIC and print one line
 * per repetition:
 *   rr-client: rep=R n=N usec=U trans_per_s=T
 *   rr-server: rep=R n=N usec=U trans_per_s=T [NAME=DELTA]...
 * The server's -s options name counters read at the start and end of each
 * repetition, between two transactions: the first integer in PATH, or
 * with :KEY the first integer after the first line that starts with KEY
 * (leading blanks ignored), e.g. ctxt=/proc/stat:ctxt; with :~TEXT the
 * per-CPU columns summed over every line holding TEXT, as in
 * irqs=/proc/interrupts:~vfio; with :@GROUP:NAME the column NAME of a
 * table of a header line and a value line that both start with "GROUP:",
 * as in retrans=/proc/net/snmp:@Tcp:RetransSegs.  The kit's netbench uses
 * them for KVM's exit counts; a counter that cannot be read prints
 * NAME=-1.  rr stat prints the counters' values once, as the server reads
 * them.  The client ends with
 *   rr-client: done reps=R median_trans_per_s=M spread_pct=S
 * where spread is (max - min) / median over the repetitions.
 *
 * Exit code: 0, 1 on a protocol or I/O error, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define RR_MAGIC	0x52523031u	/* "RR01" */
#define RR_PORT		12865
#define RR_MAX_REPS	1000
#define RR_MAX_COUNT	100000000u
#define RR_MAX_STATS	16

struct rr_hello {
	uint32_t magic;
	uint32_t warmup;
	uint32_t count;
	uint32_t reps;
};

struct rr_stat {
	const char *name;
	char path[256];
	const char *key;
};

static void print_usage(void)
{
	fprintf(stderr,
		"usage: rr server [-p PORT] [-1] [-s NAME=PATH[:KEY]]...\n"
		"       rr stat NAME=PATH[:KEY]...\n"
		"       rr client -H ADDR [-p PORT] [-w WARMUP] [-n COUNT] [-r REPS] [-t TIMEOUT_S]\n");
	exit(2);
}

static unsigned long parse_num(const char *opt, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max) {
		fprintf(stderr, "rr: %s '%s': a number 0..%lu\n", opt, s, max);
		exit(2);
	}
	return v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int io_full(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * The per-CPU columns of /proc/interrupts lines that hold @text, summed:
 * after "NN:", the leading run of all-digit fields.  -1 when none.
 */
static long long sum_columns(char *buf, const char *text)
{
	long long sum = -1;
	char *line, *tok, *save, *end;

	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, text) || !strchr(line, ':'))
			continue;
		save = NULL;
		for (tok = strtok_r(strchr(line, ':') + 1, " \t", &save); tok;
		     tok = strtok_r(NULL, " \t", &save)) {
			long long v = strtoll(tok, &end, 10);

			if (*end)
				break;
			sum = (sum < 0 ? 0 : sum) + v;
		}
	}
	return sum;
}

/*
 * Column @name of the first two lines of @buf that start with @group and a
 * colon (names, then values: /proc/net/snmp, /proc/net/netstat).  -1 when
 * there is no such column.
 */
static long long table_column(char *buf, const char *group, const char *name)
{
	char *line, *names = NULL, *tok, *save;
	size_t glen = strlen(group);
	int col = -1, i;

	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, group, glen) || line[glen] != ':')
			continue;
		if (!names) {
			names = line + glen + 1;
			continue;
		}
		save = NULL;
		for (i = 0, tok = strtok_r(names, " \t", &save); tok;
		     i++, tok = strtok_r(NULL, " \t", &save))
			if (!strcmp(tok, name)) {
				col = i;
				break;
			}
		if (col < 0)
			return -1;
		save = NULL;
		for (i = 0, tok = strtok_r(line + glen + 1, " \t", &save); tok;
		     i++, tok = strtok_r(NULL, " \t", &save))
			if (i == col)
				return strtoll(tok, NULL, 10);
		return -1;
	}
	return -1;
}

/* One counter's value, or -1 when it cannot be read. */
static long long stat_read(const struct rr_stat *st)
{
	char buf[65536], *p, *line;
	size_t klen = st->key ? strlen(st->key) : 0;
	ssize_t n;
	int fd;

	fd = open(st->path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = buf;
	if (st->key && st->key[0] == '~')
		return sum_columns(buf, st->key + 1);
	if (st->key && st->key[0] == '@') {
		char group[64], *colon = strchr(st->key + 1, ':');

		if (!colon || colon - st->key - 1 >= (long)sizeof(group))
			return -1;
		snprintf(group, sizeof(group), "%.*s",
			 (int)(colon - st->key - 1), st->key + 1);
		return table_column(buf, group, colon + 1);
	}
	if (st->key) {
		p = NULL;
		for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			line += strspn(line, " \t");
			if (!strncmp(line, st->key, klen)) {
				p = line + klen;
				break;
			}
		}
		if (!p)
			return -1;
	}
	p += strcspn(p, "0123456789");
	return *p ? strtoll(p, NULL, 10) : -1;
}

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void print_rep(const char *who, unsigned int rep, uint32_t n, uint64_t ns)
{
	printf("%s: rep=%u n=%u usec=%llu trans_per_s=%.1f", who, rep, n,
	       (unsigned long long)(ns / 1000), ns ? n * 1e9 / ns : 0.0);
}

/* Serve n transactions: each response is the request's complement. */
static int answer(int fd, uint32_t n)
{
	unsigned char b;

	while (n--) {
		if (io_full(fd, &b, 1, 0))
			return -1;
		b = ~b;
		if (io_full(fd, &b, 1, 1))
			return -1;
	}
	return 0;
}

/* One client's session: hello, warmup, the timed repetitions. */
static int serve(int fd, struct rr_stat *stats, int nstats)
{
	long long before[RR_MAX_STATS], after;
	struct rr_hello h;
	uint32_t warmup, count, reps, r;
	uint64_t t0;
	unsigned char b;
	int k;

	if (io_full(fd, &h, sizeof(h), 0) || ntohl(h.magic) != RR_MAGIC) {
		fprintf(stderr, "rr-server: bad hello\n");
		return -1;
	}
	warmup = ntohl(h.warmup);
	count = ntohl(h.count);
	reps = ntohl(h.reps);
	if (count == 0 || count > RR_MAX_COUNT || warmup > RR_MAX_COUNT ||
	    reps == 0 || reps > RR_MAX_REPS) {
		fprintf(stderr, "rr-server: hello out of range\n");
		return -1;
	}
	b = 1;
	if (io_full(fd, &b, 1, 1))
		return -1;
	if (answer(fd, warmup))
		return -1;
	for (r = 1; r <= reps; r++) {
		for (k = 0; k < nstats; k++)
			before[k] = stat_read(&stats[k]);
		t0 = now_ns();
		if (answer(fd, count))
			return -1;
		print_rep("rr-server", r, count, now_ns() - t0);
		for (k = 0; k < nstats; k++) {
			after = stat_read(&stats[k]);
			printf(" %s=%lld", stats[k].name,
			       before[k] < 0 || after < 0 ? -1 : after - before[k]);
		}
		printf("\n");
		fflush(stdout);
	}
	return 0;
}

/* NAME=PATH[:KEY] into @st; 0, or -1 with a message. */
static int parse_stat(char *arg, struct rr_stat *st)
{
	char *eq = strchr(arg, '='), *colon;

	if (!eq || eq == arg || strlen(eq + 1) >= sizeof(st->path)) {
		fprintf(stderr, "rr: a counter is NAME=PATH[:KEY]\n");
		return -1;
	}
	*eq = 0;
	st->name = arg;
	snprintf(st->path, sizeof(st->path), "%s", eq + 1);
	colon = strchr(st->path, ':');
	st->key = colon ? colon + 1 : NULL;
	if (colon)
		*colon = 0;
	return 0;
}

/* rr stat NAME=PATH[:KEY]...: each counter's value now, as the server reads it. */
static int run_stat(int argc, char **argv)
{
	struct rr_stat st;
	int i;

	if (argc < 3)
		print_usage();
	for (i = 2; i < argc; i++) {
		if (parse_stat(argv[i], &st))
			return 2;
		printf("%s%s=%lld", i > 2 ? " " : "", st.name, stat_read(&st));
	}
	printf("\n");
	return 0;
}

static int run_server(int argc, char **argv)
{
	struct rr_stat stats[RR_MAX_STATS];
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	int port = RR_PORT, once = 0, nstats = 0, one = 1, ls, fd, c, rc = 0;

	while ((c = getopt(argc, argv, "p:1s:")) != -1) {
		switch (c) {
		case 'p':
			port = parse_num("-p", optarg, 65535);
			break;
		case '1':
			once = 1;
			break;
		case 's':
			if (nstats == RR_MAX_STATS) {
				fprintf(stderr, "rr: at most %d -s\n", RR_MAX_STATS);
				return 2;
			}
			if (parse_stat(optarg, &stats[nstats]))
				return 2;
			nstats++;
			break;
		default:
			print_usage();
		}
	}
	if (optind != argc)
		print_usage();

	a.sin6_port = htons(port);
	a.sin6_addr = in6addr_any;
	ls = socket(AF_INET6, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 4)) {
		perror("rr-server: listen");
		return 1;
	}
	printf("rr-server: listening on port %d\n", port);
	fflush(stdout);
	do {
		fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("rr-server: accept");
			return 1;
		}
		set_nodelay(fd);
		rc = serve(fd, stats, nstats) ? 1 : 0;
		close(fd);
	} while (!once);
	close(ls);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int run_client(int argc, char **argv)
{
	unsigned long warmup = 200, count = 1000, reps = 5, tmo = 60;
	unsigned long port = RR_PORT;
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	const char *host = NULL;
	static double tps[RR_MAX_REPS];
	struct timeval tv;
	struct rr_hello h;
	unsigned char b, want, seq = 0;
	unsigned long i, r;
	uint64_t t0, ns;
	double med;
	int fd = -1, c;

	while ((c = getopt(argc, argv, "H:p:w:n:r:t:")) != -1) {
		switch (c) {
		case 'H':
			host = optarg;
			break;
		case 'p':
			port = parse_num("-p", optarg, 65535);
			break;
		case 'w':
			warmup = parse_num("-w", optarg, RR_MAX_COUNT);
			break;
		case 'n':
			count = parse_num("-n", optarg, RR_MAX_COUNT);
			break;
		case 'r':
			reps = parse_num("-r", optarg, RR_MAX_REPS);
			break;
		case 't':
			tmo = parse_num("-t", optarg, 86400);
			break;
		default:
			print_usage();
		}
	}
	if (!host || optind != argc || !count || !reps || !tmo)
		print_usage();

	/* Numeric addresses only: a static binary without the resolver. */
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
	} else {
		fprintf(stderr, "rr-client: -H %s: not a numeric IPv4/IPv6 address\n", host);
		return 2;
	}
	/*
	 * The guest's link may come up a little after the address is set:
	 * retry for 10 s, each attempt bounded by the send timeout (a SYN
	 * that gets no answer would otherwise retry for two minutes).
	 */
	tv.tv_sec = 2;
	tv.tv_usec = 0;
	for (i = 0; i < 50; i++) {
		fd = socket(ss.ss_family, SOCK_STREAM, 0);
		if (fd >= 0 &&
		    !setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) &&
		    !connect(fd, (struct sockaddr *)&ss, sizeof(ss)))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		usleep(200000);
	}
	if (fd < 0) {
		perror("rr-client: connect");
		return 1;
	}
	set_nodelay(fd);
	/* A lost packet must end the run, not hang it. */
	tv.tv_sec = tmo;
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	h.magic = htonl(RR_MAGIC);
	h.warmup = htonl(warmup);
	h.count = htonl(count);
	h.reps = htonl(reps);
	if (io_full(fd, &h, sizeof(h), 1) || io_full(fd, &b, 1, 0) || b != 1) {
		fprintf(stderr, "rr-client: no hello acknowledgment\n");
		return 1;
	}
	for (r = 0; r <= reps; r++) {
		unsigned long n = r ? count : warmup;

		t0 = now_ns();
		for (i = 0; i < n; i++) {
			b = seq;
			want = (unsigned char)~seq++;
			if (io_full(fd, &b, 1, 1) || io_full(fd, &b, 1, 0)) {
				perror("rr-client: transaction");
				return 1;
			}
			if (b != want) {
				fprintf(stderr, "rr-client: response %#x, expected %#x\n",
					b, want);
				return 1;
			}
		}
		if (!r)
			continue;
		ns = now_ns() - t0;
		tps[r - 1] = ns ? count * 1e9 / ns : 0;
		print_rep("rr-client", r, count, ns);
		printf("\n");
		fflush(stdout);
	}
	close(fd);
	qsort(tps, reps, sizeof(tps[0]), cmp_double);
	med = reps % 2 ? tps[reps / 2] : (tps[reps / 2 - 1] + tps[reps / 2]) / 2;
	printf("rr-client: done reps=%lu median_trans_per_s=%.1f spread_pct=%.2f\n",
	       reps, med, med > 0 ? (tps[reps - 1] - tps[0]) * 100 / med : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		print_usage();
	if (!strcmp(argv[1], "server"))
		return run_server(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stat"))
		return run_stat(argc, argv);
	if (!strcmp(argv[1], "client"))
		return run_client(argc - 1, argv + 1);
	print_usage();
	return 2;
}
