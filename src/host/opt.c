/* SPDX-License-Identifier: Apache-2.0 */
/* opt.c: one option table drives parsing, --help and the docs (opt.h). */
#include "ph_common.h"
#include "host/opt.h"

const struct ph_opt *ph_opt_find(const struct ph_opt *opts, const char *name)
{
	for (const struct ph_opt *o = opts; o && o->kind != PH_OPT_END; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

static const struct ph_opt *find_short(const struct ph_opt *opts, char c)
{
	for (const struct ph_opt *o = opts; o && o->kind != PH_OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* The entry argument a names ("--out", "-o"), or NULL. */
static const struct ph_opt *lookup(const struct ph_opt *opts, const char *a)
{
	if (a[1] == '-')
		return ph_opt_find(opts, a + 2);
	if (a[1] && !a[2])
		return find_short(opts, a[1]);
	return NULL;
}

static bool parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

static bool parse_num(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/* A flag takes no value. */
static bool is_flag(const struct ph_opt *o)
{
	return o->kind == PH_OPT_BOOL || o->kind == PH_OPT_CONST;
}

static void add_repeat(struct ph_opt_strs *l, const char *val)
{
	if (l->n < PH_OPT_STRS_MAX)
		l->v[l->n] = val;
	else if (!l->past)
		l->past = val;
	l->n++;
}

/* Stores one option's value at base; false (and why) when it is bad. */
static bool store(const struct ph_opt *o, void *base, const char *given,
		  const char *val, char *why, size_t why_size)
{
	union {
		bool b;
		int i;
		int64_t i64;
		double d;
		const char *s;
	} scratch; /* with no base: checked, not kept */
	char *p = base ? (char *)base + o->offset : (char *)&scratch;

	switch (o->kind) {
	case PH_OPT_BOOL: *(bool *)p = true; return true;
	case PH_OPT_CONST: *(int *)p = o->value; return true;
	case PH_OPT_STR:
		if (!(o->flags & PH_OPT_REPEATS))
			*(const char **)p = val;
		else if (base)
			add_repeat((struct ph_opt_strs *)p, val);
		return true;
	case PH_OPT_INT:
		if (parse_int(val, (int64_t *)p))
			return true;
		break;
	case PH_OPT_NUM:
		if (parse_num(val, (double *)p))
			return true;
		break;
	case PH_OPT_END: break;
	}
	snprintf(why, why_size, "bad value for %s: %s", given, val);
	return false;
}

static bool seen_required(const struct ph_opt *opts, const bool *seen,
			  char *why, size_t why_size)
{
	size_t k = 0;

	for (const struct ph_opt *o = opts; o && o->kind != PH_OPT_END;
	     o++, k++) {
		if ((o->flags & PH_OPT_REQUIRED) && !seen[k]) {
			snprintf(why, why_size, "--%s is required", o->name);
			return false;
		}
	}
	return true;
}

int ph_opt_parse(const struct ph_opt *opts, void *base, int argc, char **argv,
		 unsigned flags, struct ph_opt_args *a, char *why,
		 size_t why_size)
{
	bool seen[64] = { 0 }; /* by table index, for PH_OPT_REQUIRED */
	int w = 1, i;

	memset(a, 0, sizeof(*a));
	*why = 0;
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct ph_opt *o;

		if (!strcmp(arg, "--")) {
			a->dashdash = true;
			i++;
			break;
		}
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
			return PH_OPT_HELP;
		/* "-" is standard input; an argument with a space is never
		 * an option (SQL that starts with a "--" comment) */
		if (arg[0] != '-' || !arg[1] || strpbrk(arg, " \t\n")) {
			/* w <= i: the slots moved into are already read */
			argv[w++] = argv[i];
			continue;
		}
		o = lookup(opts, arg);
		if (!o) {
			snprintf(why, why_size, "unknown option %s", arg);
			return PH_OPT_BAD;
		}
		if (!is_flag(o) && i + 1 >= argc) {
			snprintf(why, why_size, "%s needs a value (%s)", arg,
				 o->metavar ? o->metavar : "a value");
			return PH_OPT_BAD;
		}
		if (!store(o, base, arg, is_flag(o) ? NULL : argv[i + 1], why,
			   why_size))
			return PH_OPT_BAD;
		if (!is_flag(o))
			i++;
		if ((size_t)(o - opts) < PH_ARRAY_SIZE(seen))
			seen[o - opts] = true;
	}
	if (a->dashdash && (flags & PH_OPT_PARSE_REST)) {
		a->rest = argv + i;
		a->nrest = argc - i;
	} else {
		for (; i < argc; i++)
			argv[w++] = argv[i];
	}
	a->pos = argv + 1;
	a->npos = w - 1;
	if (!seen_required(opts, seen, why, why_size))
		return PH_OPT_BAD;
	return PH_OPT_OK;
}

/* Appends to buf at *len, never past size - 1. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
	PH_PRINTF(4, 5);

static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

void ph_opt_synopsis(const struct ph_opt *opts, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (const struct ph_opt *o = opts; o && o->kind != PH_OPT_END; o++) {
		bool req = o->flags & PH_OPT_REQUIRED;

		append(buf, size, &len, "%s%s--%s%s%s%s%s", len ? " " : "",
		       req ? "" : "[", o->name, o->metavar ? " " : "",
		       o->metavar ? o->metavar : "", req ? "" : "]",
		       o->flags & PH_OPT_REPEATS ? "..." : "");
	}
}

/* "-o, --out DIR" into buf. */
static void spelling(const struct ph_opt *o, char *buf, size_t size)
{
	const char *mv = o->metavar ? o->metavar : "";
	const char *gap = o->metavar ? " " : "";

	if (o->short_name)
		snprintf(buf, size, "-%c, --%s%s%s", o->short_name, o->name,
			 gap, mv);
	else
		snprintf(buf, size, "--%s%s%s", o->name, gap, mv);
}

/*
 * Prints s from column col, breaking lines before 80 columns at spaces
 * and going on at column indent.  A synopsis breaks only before an
 * option ('[' or '-'), never between an option and its value.
 */
void ph_opt_print_wrapped(FILE *f, const char *s, int col, int indent,
			  bool synopsis)
{
	for (bool first = true; *s; first = false) {
		const char *end = s;
		int n;

		/* the next word: up to a space we may break at */
		do {
			end += strcspn(end + 1, " ") + 1;
		} while (*end && synopsis && end[1] != '[' && end[1] != '-');
		n = (int)(end - s);
		if (!first && col + 1 + n > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, (size_t)n, f);
		col += n;
		s = *end ? end + 1 : end;
	}
	fputc('\n', f);
}

/* What help adds after an option's line. */
static const char *notes(const struct ph_opt *o)
{
	if (o->flags & PH_OPT_REQUIRED)
		return " (required)";
	if (o->flags & PH_OPT_REPEATS)
		return " (may be repeated)";
	return "";
}

void ph_opt_print_help(const struct ph_opt *opts, FILE *f)
{
	int width = 0;
	char sp[160];

	for (const struct ph_opt *o = opts; o && o->kind != PH_OPT_END; o++) {
		spelling(o, sp, sizeof(sp));
		if ((int)strlen(sp) > width)
			width = (int)strlen(sp);
	}
	/* a long spelling would squeeze every line: cap the column */
	if (width > 24)
		width = 24;
	for (const struct ph_opt *o = opts; o && o->kind != PH_OPT_END; o++) {
		char line[600];

		spelling(o, sp, sizeof(sp));
		snprintf(line, sizeof(line), "%s%s",
			 o->help ? o->help : "(undocumented)", notes(o));
		if ((int)strlen(sp) > width) {
			fprintf(f, "  %s\n%*s", sp, width + 4, "");
			ph_opt_print_wrapped(f, line, width + 4, width + 4,
					     false);
		} else {
			fprintf(f, "  %-*s  ", width, sp);
			ph_opt_print_wrapped(f, line, width + 4, width + 4,
					     false);
		}
	}
}

/* s with every '|' escaped, as a Markdown table cell needs. */
static void print_cell(const char *s, FILE *f)
{
	if (!s)
		s = "(undocumented)";
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void ph_opt_print_markdown(const struct ph_opt *opts, FILE *f)
{
	char sp[160];

	if (!opts || opts->kind == PH_OPT_END) {
		fprintf(f, "No options.\n");
		return;
	}
	fprintf(f, "| option | meaning |\n|---|---|\n");
	for (const struct ph_opt *o = opts; o->kind != PH_OPT_END; o++) {
		spelling(o, sp, sizeof(sp));
		fputs("| `", f);
		print_cell(sp, f);
		fputs("` | ", f);
		print_cell(o->help, f);
		fprintf(f, "%s |\n", notes(o));
	}
}
