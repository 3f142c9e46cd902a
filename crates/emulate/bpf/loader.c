// SPDX-License-Identifier: GPL-2.0
/*
 * ccsim-bpf-loader: the one resident process that holds every BPF attachment of a ccsim emulation
 * run. Everything it attaches is detached when it ends: on EOF of stdin (its parent closed the
 * pipe or died), on SIGTERM/SIGINT/SIGHUP, and - through PR_SET_PDEATHSIG - when its parent dies.
 * The struct_ops CCs and the cgroup sock_ops program are held by BPF links, so even a SIGKILL of
 * the loader unregisters them; the tc filters are detached explicitly (a SIGKILLed loader leaves
 * them in their namespaces until those are deleted).
 *
 * usage: ccsim-bpf-loader [--cc OBJ]... [--cgroup CGROUP_V2_DIR]
 *                         [--base-rtt LOCAL_IPV4 REMOTE_IPV4 USEC]...
 *                         [--mark OBJ NETNS_PATH DEV K packets|bytes drop|queue]...
 *
 *   --cc OBJ       load OBJ, register its struct_ops congestion control through a BPF link
 *                  (BPF_F_LINK map + BPF_LINK_CREATE/BPF_STRUCT_OPS; unregistered when the link
 *                  fd closes). If OBJ has a sockops program and --cgroup is given, attach it to
 *                  the cgroup (a link too). If OBJ has the map ccsim_base_rtt, fill it from the
 *                  --base-rtt rules.
 *   --mark ...     load a fresh instance of the ECN marker OBJ with K / unit / drop policy, and
 *                  attach it at the clsact egress hook of DEV inside the namespace NETNS_PATH.
 *
 * stdout: one line `ready` once everything is attached; at the end one JSON line
 *   {"cc":{"<name>":{"<counter>":N,...}},"markers":[{"netns":..,"dev":..,"k":..,"marks":N,...}],
 *    "base_rtt_set":N}
 * (every variable of each object's .bss is reported by name). Any failure before `ready`: a
 * message on stderr naming what failed, everything attached so far detached, exit status 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* Newer than the uapi headers of some distributions (Debian 12 ships 6.1's). */
#define CCSIM_BPF_F_LINK (1U << 13)      /* map flag: struct_ops map registered through a link */
#define CCSIM_BPF_STRUCT_OPS_ATTACH 44   /* enum bpf_attach_type BPF_STRUCT_OPS */

#define MAX_ITEMS 64

struct cc_item {
	const char *path;
	struct bpf_object *obj;
	struct bpf_map *st_map;
	struct bpf_link *st_link;     /* libbpf's link object */
	int st_link_fd;               /* the kernel BPF link we created (libbpf < 1.2), else -1 */
	struct bpf_link *cg_link;     /* sockops on the cgroup */
	char name[64];
};

struct mark_item {
	const char *obj_path;
	const char *netns_path;
	const char *dev;
	unsigned long long k;
	int bytes;
	int drop;
	struct bpf_object *obj;
	int netns_fd;
	int ifindex;
	int hook_created;
	int attached;
	struct bpf_tc_hook hook;
	struct bpf_tc_opts opts;
};

struct base_rtt_rule {
	uint32_t local, remote; /* network byte order */
	uint32_t usec;
};

static struct cc_item ccs[MAX_ITEMS];
static int n_cc;
static struct mark_item marks[MAX_ITEMS];
static int n_mark;
static struct base_rtt_rule rules[4096];
static int n_rule;
static const char *cgroup_dir;
static int orig_netns = -1;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void detach_all(void);

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ccsim-bpf-loader: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	detach_all();
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "usage: ccsim-bpf-loader [--cc OBJ]... [--cgroup CGROUP_V2_DIR]\n"
			"                        [--base-rtt LOCAL_IPV4 REMOTE_IPV4 USEC]...\n"
			"                        [--mark OBJ NETNS_PATH DEV K packets|bytes drop|queue]...\n");
	exit(2);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The internal map of a section (".bss", ".rodata"): libbpf names it <obj prefix><section>. */
static struct bpf_map *section_map(struct bpf_object *obj, const char *section)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map) && ends_with(bpf_map__name(map), section))
			return map;
	}
	return NULL;
}

/* Offset and size of the global variable `name` in the DATASEC of an internal map. */
static int find_var(struct bpf_object *obj, struct bpf_map *map, const char *name, size_t *off, size_t *size)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec;
	const struct btf_var_secinfo *vs;
	int i;

	if (!btf)
		return -ENOENT;
	sec = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	if (!sec || !btf_is_datasec(sec))
		return -ENOENT;
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (var && strcmp(btf__name_by_offset(btf, var->name_off), name) == 0) {
			*off = vs->offset;
			*size = vs->size;
			return 0;
		}
	}
	return -ENOENT;
}

/* Set a .rodata/.data variable before load. */
static void set_var(struct bpf_object *obj, const char *section, const char *name, unsigned long long value,
		    const char *what)
{
	struct bpf_map *map = section_map(obj, section);
	const void *init;
	size_t size = 0, off, vsize;
	char *buf;

	if (!map)
		die("%s: no %s section", what, section);
	if (find_var(obj, map, name, &off, &vsize))
		die("%s: no variable %s in %s", what, name, section);
	init = bpf_map__initial_value(map, &size);
	if (!init || off + vsize > size)
		die("%s: cannot read the initial value of %s", what, section);
	buf = malloc(size);
	if (!buf)
		die("out of memory");
	memcpy(buf, init, size);
	switch (vsize) {
	case 1: *(uint8_t *)(buf + off) = (uint8_t)value; break;
	case 2: *(uint16_t *)(buf + off) = (uint16_t)value; break;
	case 4: *(uint32_t *)(buf + off) = (uint32_t)value; break;
	case 8: *(uint64_t *)(buf + off) = (uint64_t)value; break;
	default: die("%s: variable %s has size %zu", what, name, vsize);
	}
	if (bpf_map__set_initial_value(map, buf, size))
		die("%s: cannot set %s", what, name);
	free(buf);
}

/* Print every variable of the object's .bss as "name":value (comma separated). Returns the value
 * of `want` (if not NULL) through *want_value. */
static void print_bss(struct bpf_object *obj, const char *want, unsigned long long *want_value)
{
	struct bpf_map *map = section_map(obj, ".bss");
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec;
	const struct btf_var_secinfo *vs;
	unsigned int zero = 0;
	size_t size;
	char *buf;
	int i, first = 1;

	if (!map || !btf)
		return;
	size = bpf_map__value_size(map);
	buf = calloc(1, size);
	if (!buf)
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(map), &zero, buf)) {
		free(buf);
		return;
	}
	sec = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	if (!sec || !btf_is_datasec(sec)) {
		free(buf);
		return;
	}
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		const char *name;
		unsigned long long v;

		if (!var || vs->offset + vs->size > size)
			continue;
		name = btf__name_by_offset(btf, var->name_off);
		switch (vs->size) {
		case 1: v = *(uint8_t *)(buf + vs->offset); break;
		case 2: v = *(uint16_t *)(buf + vs->offset); break;
		case 4: v = *(uint32_t *)(buf + vs->offset); break;
		case 8: v = *(uint64_t *)(buf + vs->offset); break;
		default: continue;
		}
		printf("%s\"%s\":%llu", first ? "" : ",", name, v);
		first = 0;
		if (want && want_value && strcmp(name, want) == 0)
			*want_value = v;
	}
	free(buf);
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void enter_netns(int fd, const char *what)
{
	if (setns(fd, CLONE_NEWNET))
		die("%s: setns: %s", what, strerror(errno));
}

static void leave_netns(void)
{
	if (orig_netns >= 0 && setns(orig_netns, CLONE_NEWNET)) {
		fprintf(stderr, "ccsim-bpf-loader: cannot return to the original network namespace: %s\n",
			strerror(errno));
		exit(1);
	}
}

static void load_cc(struct cc_item *c)
{
	struct bpf_program *prog, *sockops = NULL;
	struct bpf_map *map, *rtt_map = NULL;
	int err, i;

	c->st_link_fd = -1;
	c->obj = bpf_object__open_file(c->path, NULL);
	if (!c->obj) {
		err = -errno;
		c->obj = NULL;
		die("%s: cannot open the BPF object: %s", c->path, strerror(-err));
	}
	bpf_object__for_each_map(map, c->obj) {
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS) {
			if (c->st_map)
				die("%s: more than one struct_ops map", c->path);
			c->st_map = map;
			/* The link flavour: the CC is registered by a BPF link and unregistered as soon
			 * as the link's last fd is closed (also when this process is killed). */
			bpf_map__set_map_flags(map, bpf_map__map_flags(map) | CCSIM_BPF_F_LINK);
		} else if (strcmp(bpf_map__name(map), "ccsim_base_rtt") == 0) {
			rtt_map = map;
		}
	}
	if (!c->st_map)
		die("%s: no struct_ops map (SEC(\".struct_ops\")) in the object", c->path);
	snprintf(c->name, sizeof(c->name), "%s", bpf_map__name(c->st_map));
	bpf_object__for_each_program(prog, c->obj) {
		if (bpf_program__type(prog) == BPF_PROG_TYPE_SOCK_OPS) {
			sockops = prog;
			bpf_program__set_autoload(prog, cgroup_dir != NULL);
		}
	}
	err = bpf_object__load(c->obj);
	if (err)
		die("%s: cannot load the BPF object (%s): %s", c->path, c->name, strerror(-err));

	if (n_rule && rtt_map) {
		for (i = 0; i < n_rule; i++) {
			uint32_t key[2] = { rules[i].local, rules[i].remote };

			if (bpf_map_update_elem(bpf_map__fd(rtt_map), key, &rules[i].usec, BPF_ANY))
				die("%s: map ccsim_base_rtt: cannot add a rule: %s", c->path, strerror(errno));
		}
	}

	/* Register. libbpf 1.1 does not know BPF_F_LINK: its bpf_map__attach_struct_ops() only
	 * writes the map value (for a BPF_F_LINK map that makes it READY without registering), and
	 * the registration is the BPF link created here. libbpf >= 1.2 creates the link itself. */
	c->st_link = bpf_map__attach_struct_ops(c->st_map);
	if (!c->st_link)
		die("%s: cannot attach the struct_ops map %s: %s", c->path, c->name, strerror(errno));
#if LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION < 2
	bpf_link__disconnect(c->st_link); /* its detach would try a map delete; the link below owns it */
	c->st_link_fd = bpf_link_create(bpf_map__fd(c->st_map), 0, CCSIM_BPF_STRUCT_OPS_ATTACH, NULL);
	if (c->st_link_fd < 0) {
		err = errno;
		if (err == EEXIST)
			die("%s: cannot register %s: a congestion control of that name is already registered "
			    "(another emulation running?)",
			    c->path, c->name);
		die("%s: cannot register %s (BPF link): %s", c->path, c->name, strerror(err));
	}
#endif

	if (sockops && cgroup_dir) {
		int cg = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (cg < 0)
			die("cgroup %s: %s", cgroup_dir, strerror(errno));
		c->cg_link = bpf_program__attach_cgroup(sockops, cg);
		err = errno;
		close(cg);
		if (!c->cg_link)
			die("%s: cannot attach the sockops program %s to cgroup %s: %s", c->path,
			    bpf_program__name(sockops), cgroup_dir, strerror(err));
	}
}

static void load_mark(struct mark_item *m)
{
	struct bpf_program *prog = NULL, *p;
	char what[512];
	int err;

	snprintf(what, sizeof(what), "marker on %s in %s (%s)", m->dev, m->netns_path, m->obj_path);
	m->netns_fd = -1;
	m->obj = bpf_object__open_file(m->obj_path, NULL);
	if (!m->obj) {
		err = errno;
		m->obj = NULL;
		die("%s: cannot open the BPF object: %s", what, strerror(err));
	}
	set_var(m->obj, ".rodata", "k", m->k, what);
	set_var(m->obj, ".rodata", "unit_bytes", m->bytes, what);
	set_var(m->obj, ".rodata", "drop_non_ect", m->drop, what);
	err = bpf_object__load(m->obj);
	if (err)
		die("%s: cannot load the BPF object: %s", what, strerror(-err));
	bpf_object__for_each_program(p, m->obj) {
		if (bpf_program__type(p) == BPF_PROG_TYPE_SCHED_CLS)
			prog = p;
	}
	if (!prog)
		die("%s: no SEC(\"tc\") program in the object", what);

	m->netns_fd = open(m->netns_path, O_RDONLY | O_CLOEXEC);
	if (m->netns_fd < 0)
		die("%s: cannot open the network namespace %s: %s", what, m->netns_path, strerror(errno));
	enter_netns(m->netns_fd, what);
	m->ifindex = if_nametoindex(m->dev);
	if (!m->ifindex) {
		err = errno;
		leave_netns();
		die("%s: no device %s in that namespace: %s", what, m->dev, strerror(err));
	}
	memset(&m->hook, 0, sizeof(m->hook));
	m->hook.sz = sizeof(m->hook);
	m->hook.ifindex = m->ifindex;
	m->hook.attach_point = BPF_TC_EGRESS;
	err = bpf_tc_hook_create(&m->hook);
	if (err && err != -EEXIST) {
		leave_netns();
		die("%s: cannot create the clsact qdisc on %s: %s", what, m->dev, strerror(-err));
	}
	m->hook_created = err == 0;
	memset(&m->opts, 0, sizeof(m->opts));
	m->opts.sz = sizeof(m->opts);
	m->opts.prog_fd = bpf_program__fd(prog);
	err = bpf_tc_attach(&m->hook, &m->opts);
	leave_netns();
	if (err)
		die("%s: cannot attach the tc egress filter to %s: %s", what, m->dev, strerror(-err));
	m->attached = 1;
}

static void detach_mark(struct mark_item *m)
{
	int err;

	if (m->netns_fd >= 0 && (m->attached || m->hook_created)) {
		if (setns(m->netns_fd, CLONE_NEWNET) == 0) {
			if (m->attached) {
				struct bpf_tc_opts o;

				memset(&o, 0, sizeof(o));
				o.sz = sizeof(o);
				o.handle = m->opts.handle;
				o.priority = m->opts.priority;
				err = bpf_tc_detach(&m->hook, &o);
				if (err && err != -ENOENT && err != -ENODEV && err != -EINVAL)
					fprintf(stderr, "ccsim-bpf-loader: detaching the marker from %s: %s\n", m->dev,
						strerror(-err));
			}
			if (m->hook_created) {
				/* Destroying the clsact qdisc needs both attach points. */
				m->hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
				bpf_tc_hook_destroy(&m->hook);
			}
			leave_netns();
		}
	}
	m->attached = 0;
	m->hook_created = 0;
	if (m->netns_fd >= 0)
		close(m->netns_fd);
	m->netns_fd = -1;
	if (m->obj)
		bpf_object__close(m->obj);
	m->obj = NULL;
}

static void detach_cc(struct cc_item *c)
{
	if (c->cg_link)
		bpf_link__destroy(c->cg_link);
	c->cg_link = NULL;
	if (c->st_link_fd >= 0)
		close(c->st_link_fd);
	c->st_link_fd = -1;
	if (c->st_link)
		bpf_link__destroy(c->st_link);
	c->st_link = NULL;
	if (c->obj)
		bpf_object__close(c->obj);
	c->obj = NULL;
}

static void detach_all(void)
{
	int i;

	for (i = n_mark - 1; i >= 0; i--)
		detach_mark(&marks[i]);
	for (i = n_cc - 1; i >= 0; i--)
		detach_cc(&ccs[i]);
}

static void print_counters(void)
{
	unsigned long long base_rtt_set = 0;
	int i;

	printf("{\"cc\":{");
	for (i = 0; i < n_cc; i++) {
		unsigned long long v = 0;

		printf("%s", i ? "," : "");
		json_string(ccs[i].name);
		printf(":{");
		print_bss(ccs[i].obj, "base_rtt_set", &v);
		printf("}");
		base_rtt_set += v;
	}
	printf("},\"markers\":[");
	for (i = 0; i < n_mark; i++) {
		printf("%s{\"netns\":", i ? "," : "");
		json_string(marks[i].netns_path);
		printf(",\"dev\":");
		json_string(marks[i].dev);
		printf(",\"k\":%llu,\"unit\":\"%s\",\"drop_non_ect\":%s,", marks[i].k, marks[i].bytes ? "bytes" : "packets",
		       marks[i].drop ? "true" : "false");
		print_bss(marks[i].obj, NULL, NULL);
		printf("}");
	}
	printf("],\"base_rtt_set\":%llu}\n", base_rtt_set);
	fflush(stdout);
}

static uint32_t parse_ip(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "ccsim-bpf-loader: not an IPv4 address: %s\n", s);
		exit(2);
	}
	return a.s_addr;
}

static unsigned long long parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !*s || *end) {
		fprintf(stderr, "ccsim-bpf-loader: %s: not a number: %s\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t block;
	pid_t parent = getppid();
	int i;

	/* Exit (and detach everything) when the parent dies. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cc") == 0 && i + 1 < argc) {
			if (n_cc == MAX_ITEMS)
				usage();
			ccs[n_cc].path = argv[++i];
			ccs[n_cc].st_link_fd = -1;
			n_cc++;
		} else if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc) {
			cgroup_dir = argv[++i];
		} else if (strcmp(argv[i], "--base-rtt") == 0 && i + 3 < argc) {
			if (n_rule == (int)(sizeof(rules) / sizeof(rules[0])))
				usage();
			rules[n_rule].local = parse_ip(argv[i + 1]);
			rules[n_rule].remote = parse_ip(argv[i + 2]);
			rules[n_rule].usec = (uint32_t)parse_num(argv[i + 3], "--base-rtt USEC");
			n_rule++;
			i += 3;
		} else if (strcmp(argv[i], "--mark") == 0 && i + 6 < argc) {
			struct mark_item *m;

			if (n_mark == MAX_ITEMS)
				usage();
			m = &marks[n_mark++];
			m->obj_path = argv[i + 1];
			m->netns_path = argv[i + 2];
			m->dev = argv[i + 3];
			m->k = parse_num(argv[i + 4], "--mark K");
			m->netns_fd = -1;
			if (strcmp(argv[i + 5], "packets") == 0)
				m->bytes = 0;
			else if (strcmp(argv[i + 5], "bytes") == 0)
				m->bytes = 1;
			else
				usage();
			if (strcmp(argv[i + 6], "drop") == 0)
				m->drop = 1;
			else if (strcmp(argv[i + 6], "queue") == 0)
				m->drop = 0;
			else
				usage();
			i += 6;
		} else {
			usage();
		}
	}

	/* Signals stay blocked while attaching; a pending one is handled in the wait below. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, NULL);

	libbpf_set_print(libbpf_print);
	orig_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig_netns < 0)
		die("/proc/self/ns/net: %s", strerror(errno));

	for (i = 0; i < n_cc; i++)
		load_cc(&ccs[i]);
	if (n_rule) {
		int has_map = 0;

		for (i = 0; i < n_cc; i++)
			has_map |= bpf_object__find_map_by_name(ccs[i].obj, "ccsim_base_rtt") != NULL;
		if (!has_map)
			die("--base-rtt given but no --cc object has the map ccsim_base_rtt");
	}
	for (i = 0; i < n_mark; i++)
		load_mark(&marks[i]);

	printf("ready\n");
	fflush(stdout);

	/* Wait for EOF on stdin or a signal. */
	while (!stop_signal) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		sigset_t none;
		int r;

		sigemptyset(&none);
		r = ppoll(&pfd, 1, NULL, &none);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
			char buf[256];
			ssize_t n = read(0, buf, sizeof(buf));

			if (n <= 0 && !(n < 0 && errno == EINTR))
				break;
		}
	}

	print_counters();
	detach_all();
	return 0;
}
