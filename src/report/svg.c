// SPDX-License-Identifier: GPL-2.0-or-later
/* svg.c - an interactive SVG flame graph of the calling contexts (self-contained). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "view.h"
#include "xml.h"

/* A frame of the flame graph. */
struct fnode {
	size_t parent;	   /* SIZE_MAX for the root */
	uint32_t routine;  /* PROFILE_NONE: the root or a thread */
	int tid;	   /* a thread's frame: its tid */
	double self, incl; /* microseconds (or calls) */
	double x;	   /* left edge, in the same unit */
	int depth;
	size_t first, next; /* children, sorted by name (SIZE_MAX: none) */
};

struct flame {
	struct fnode *v;
	size_t n, cap;
};

static size_t flame_add(struct flame *fl, size_t parent, uint32_t routine, int tid, double self)
{
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 256;
		fl->v = xrealloc(fl->v, fl->cap * sizeof(*fl->v));
	}
	fl->v[fl->n] = (struct fnode){.parent = parent,
				      .routine = routine,
				      .tid = tid,
				      .self = self,
				      .first = SIZE_MAX,
				      .next = SIZE_MAX};
	return fl->n++;
}

/* Append a calling-context tree under frame `under` (its root becomes `under`). */
static void flame_graft(struct flame *fl, const struct report *rp, size_t under)
{
	const struct profile_set *p = rp->set;
	size_t *map = xcalloc(p->n_nodes ? p->n_nodes : 1, sizeof(*map));
	size_t i;

	map[0] = under;
	for (i = 1; i < p->n_nodes; i++) {
		const struct profile_node *x = &p->nodes[i];

		map[i] = flame_add(fl, map[x->parent], x->routine, 0, (double)node_value(rp, i));
	}
	free(map);
}

static const char *flame_name(const struct report *rp, const struct fnode *f, char *buf, size_t len)
{
	if (f->routine != PROFILE_NONE && f->routine < rp->sec->n_routines)
		return rname(rp, f->routine);
	if (f->tid) {
		return stack_name(f->tid, buf, len);
	}
	return "all";
}

/* What frames are sorted within (qsort_r's argument). */
struct flame_sort {
	const struct report *rp;
	const struct flame *fl;
};

/* Frames by name, then by index. */
static int cmp_fnode(const void *p, const void *q, void *arg)
{
	const struct flame_sort *fs = arg;
	size_t a = *(const size_t *)p, b = *(const size_t *)q;
	char ba[32], bb[32];
	int c = strcmp(flame_name(fs->rp, &fs->fl->v[a], ba, sizeof(ba)),
		       flame_name(fs->rp, &fs->fl->v[b], bb, sizeof(bb)));

	if (c)
		return c;
	return a < b ? -1 : a > b;
}

/* Inclusive values (children after parents), children sorted by name, x and depth. */
static void flame_layout(struct flame *fl, const struct report *rp)
{
	struct flame_sort fs = {.rp = rp, .fl = fl};
	size_t *kids, *at, *fill, i, k;

	for (i = 0; i < fl->n; i++)
		fl->v[i].incl = fl->v[i].self;
	for (i = fl->n; i-- > 1;)
		fl->v[fl->v[i].parent].incl += fl->v[i].incl;
	at = xcalloc(fl->n + 1, sizeof(*at));
	fill = xcalloc(fl->n + 1, sizeof(*fill));
	kids = xcalloc(fl->n + 1, sizeof(*kids));
	for (i = 1; i < fl->n; i++)
		at[fl->v[i].parent + 1]++;
	for (i = 1; i <= fl->n; i++)
		at[i] += at[i - 1];
	for (i = 1; i < fl->n; i++)
		kids[at[fl->v[i].parent] + fill[fl->v[i].parent]++] = i;
	for (i = 0; i < fl->n; i++) {
		double x = fl->v[i].x;

		qsort_r(kids + at[i], at[i + 1] - at[i], sizeof(*kids), cmp_fnode, &fs);
		for (k = at[i]; k < at[i + 1]; k++) {
			struct fnode *c = &fl->v[kids[k]];

			c->x = x;
			c->depth = fl->v[i].depth + 1;
			x += c->incl;
		}
	}
	free(kids);
	free(fill);
	free(at);
}

/* Text escaped for XML character data and attribute values (view.h). */
void xml_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n;

		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fputc(' ', out);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				fputs("&#xfffd;", out);
				break;
			}
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		s++;
	}
}

/* At most `max` characters of name (".." when cut), as SVG text. */
static void xml_fit(FILE *out, const char *name, int max)
{
	size_t keep;
	char *cut;

	if (max < 3)
		return;
	if ((int)strlen(name) <= max) {
		xml_str(out, name);
		return;
	}
	/* cut before a character, not inside a UTF-8 sequence */
	for (keep = (size_t)max - 2; keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80; keep--)
		;
	cut = xasprintf("%.*s..", (int)keep, name);
	xml_str(out, cut);
	free(cut);
}

#define SVG_W 1200.0 /* width of the frames' area, px */
#define SVG_PAD 10.0 /* left and right margins */
#define SVG_FH 16    /* frame height */
#define SVG_MINW 0.1 /* frames narrower than this (px) are left out */
#define SVG_CHAR 7.0 /* approximate width of a character of the frames' font */

static const char svg_script[] =
    "var fr=document.getElementsByClassName('f'),det=document.getElementById('details');\n"
    "var W="
    "1200"
    ",P=10,C=7;\n"
    "function num(e,a){return parseFloat(e.getAttribute(a));}\n"
    "function fit(e,w){var t=e.getElementsByTagName('text')[0],n=e.getAttribute('data-n'),"
    "m=Math.floor((w-6)/C);\n"
    "t.textContent=m<3?'':(n.length<=m?n:n.substring(0,m-2)+'..');}\n"
    "function zoom(g){var x=num(g,'data-x'),w=num(g,'data-w'),d=num(g,'data-d');\n"
    "for(var i=0;i<fr.length;i++){var e=fr[i],ex=num(e,'data-x'),ew=num(e,'data-w'),"
    "ed=num(e,'data-d'),r=e.getElementsByTagName('rect')[0],t=e.getElementsByTagName('text')[0];\n"
    "var nx,nw;if(ed>=d&&ex>=x-1e-9&&ex+ew<=x+w+1e-9){nx=(ex-x)/w;nw=ew/w;e.style.opacity=1;}\n"
    "else if(ed<d&&ex<=x+1e-9&&ex+ew>=x+w-1e-9){nx=0;nw=1;e.style.opacity=0.5;}\n"
    "else{e.style.display='none';continue;}\n"
    "e.style.display='';r.setAttribute('x',P+nx*W);r.setAttribute('width',Math.max(nw*W-0.5,0));"
    "t.setAttribute('x',P+nx*W+3);fit(e,nw*W);}}\n"
    "for(var i=0;i<fr.length;i++){(function(e){\n"
    "e.onclick=function(){zoom(e);};\n"
    "e.onmouseover=function(){det.textContent=e.getAttribute('data-i');};\n"
    "e.onmouseout=function(){det.textContent=' ';};})(fr[i]);}\n";

/* A deterministic warm colour for a name, as flame graphs use. */
static void flame_colour(const char *name, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = 80 + (int)((h >> 8) % 150);
	*b = 30 + (int)((h >> 16) % 50);
}

void write_svg(FILE *out, const struct report *rp)
{
	bool timed = rp->timed;
	struct flame fl = {0};
	double total;
	int max_depth = 0, height;
	size_t i, t;

	flame_add(&fl, SIZE_MAX, PROFILE_NONE, 0, 0);
	if (!rp->opts->threads) {
		flame_graft(&fl, rp, 0);
	} else {
		for (t = 0; t < rp->sec->n_threads; t++) {
			const struct profile_set *th = &rp->sec->threads[t];
			struct report tr;

			report_build(&tr, rp->p, rp->sec, th, rp->opts);
			flame_graft(&fl, &tr, flame_add(&fl, 0, PROFILE_NONE, th->tid, 0));
			report_free(&tr);
		}
	}
	flame_layout(&fl, rp);
	total = fl.v[0].incl;
	for (i = 0; i < fl.n; i++)
		if (fl.v[i].incl > 0 && fl.v[i].depth > max_depth)
			max_depth = fl.v[i].depth;
	height = (max_depth + 1) * SVG_FH + 66;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%d\" viewBox=\"0 0 %.0f %d\">\n",
		SVG_W + 2 * SVG_PAD, height, SVG_W + 2 * SVG_PAD, height);
	fputs("<style>text{font-family:monospace;font-size:12px;fill:#000}"
	      "g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}</style>\n",
	      out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%d\" fill=\"#f8f8f0\"/>\n",
		SVG_W + 2 * SVG_PAD, height);
	fprintf(out, "<text x=\"%.0f\" y=\"20\" style=\"font-size:15px\">fortstat: ", SVG_PAD);
	xml_str(out, rp->sec->label ? rp->sec->label : "?");
	fprintf(out, " (%s; click a frame to zoom, click all to reset)</text>\n",
		timed ? (rp->c == CLOCK_KIND_WALL ? "wall time" : "CPU time") : "calls");
	fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n", SVG_PAD, height - 10);
	for (i = 0; i < fl.n; i++) {
		const struct fnode *f = &fl.v[i];
		double w = total > 0 ? f->incl / total * SVG_W : 0;
		double x = total > 0 ? SVG_PAD + f->x / total * SVG_W : SVG_PAD;
		int y = height - 34 - (f->depth + 1) * SVG_FH;
		char buf[32];
		const char *name = flame_name(rp, f, buf, sizeof(buf));
		int cr, cg, cb;

		if (!(f->incl > 0) || w < SVG_MINW)
			continue;
		flame_colour(name, &cr, &cg, &cb);
		if (f->routine == PROFILE_NONE)
			cr = cg = cb = 200;
		fprintf(out,
			"<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" data-n=\"",
			f->x / total, f->incl / total, f->depth);
		xml_str(out, name);
		fputs("\" data-i=\"", out);
		xml_str(out, name);
		if (timed)
			fprintf(out, ": %.6f s (%.2f%%), self %.6f s\"", f->incl / 1e6,
				100.0 * f->incl / total, f->self / 1e6);
		else
			fprintf(out, ": %.0f calls (%.2f%%), own %.0f\"", f->incl,
				100.0 * f->incl / total, f->self);
		fputs("><title>", out);
		xml_str(out, name);
		if (timed)
			fprintf(out, " (%.6f s, %.2f%%)", f->incl / 1e6, 100.0 * f->incl / total);
		else
			fprintf(out, " (%.0f calls, %.2f%%)", f->incl, 100.0 * f->incl / total);
		fprintf(out,
			"</title><rect x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.3f\" y=\"%d\">",
			x, y, fmax(w - 0.5, 0), SVG_FH - 1, cr, cg, cb, x + 3, y + 12);
		xml_fit(out, name, (int)((w - 6) / SVG_CHAR));
		fputs("</text></g>\n", out);
	}
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		svg_script);
	free(fl.v);
}

/* ---- a merge's flame graph ---- */

/* A context's value in folded stacks and flame graphs: self microseconds, or calls. */
static uint64_t merged_value(const struct mview *m, const struct profile_node *x)
{
	if (m->count_only)
		return x->calls;
	return (x->self[m->c] + 500) / 1000;
}

static int cmp_siblings(const void *p, const void *q, void *arg)
{
	const struct mview *cmp_m = arg;
	const struct profile_node *x = &cmp_m->nodes[*(const uint32_t *)p];
	const struct profile_node *y = &cmp_m->nodes[*(const uint32_t *)q];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(cmp_m->rt[x->routine].name, cmp_m->rt[y->routine].name);
}

/*
 * A flame graph of the summed contexts: each frame as wide as its inclusive
 * value (self microseconds, or calls when counting), children in name order.
 */
int write_merged_svg(const struct mview *m, FILE *out)
{
	size_t n = m->n_nodes, i;
	double *incl = xcalloc(n, sizeof(*incl)), *x = xcalloc(n, sizeof(*x));
	double *next_x = xcalloc(n, sizeof(*next_x));
	int *depth = xcalloc(n, sizeof(*depth)), max_depth = 0;
	uint32_t *order = xcalloc(n, sizeof(*order));
	const double width = 1200, fh = 17;
	double scale;

	if (!m->n_in)
		return -EINVAL;
	if (m->no_stacks) {
		fs_error("flame graph: an input has no \"stacks\" (a report of an older fortstat)");
		free(incl), free(x), free(next_x), free(depth), free(order);
		return -ENODATA;
	}
	/* a parent's index is below its children's */
	for (i = n; i-- > 1;) {
		incl[i] += (double)merged_value(m, &m->nodes[i]);
		incl[m->nodes[i].parent] += incl[i];
	}
	for (i = 1; i < n; i++) {
		depth[i] = depth[m->nodes[i].parent] + 1;
		if (depth[i] > max_depth)
			max_depth = depth[i];
		order[i - 1] = (uint32_t)i;
	}
	qsort_r(order, n - 1, sizeof(*order), cmp_siblings, (void *)m);
	/*
	 * Siblings in name order. Sorted by parent index, a parent's group comes
	 * after its own parent's (a smaller index): it is placed before its children.
	 */
	for (i = 0; i + 1 < n; i++) {
		uint32_t k = order[i], p = m->nodes[k].parent;

		x[k] = x[p] + next_x[p];
		next_x[p] += incl[k];
	}
	scale = incl[0] > 0 ? (width - 20) / incl[0] : 0;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"10\" y=\"20\" font-family=\"monospace\" font-size=\"14\">",
		width, (max_depth + 3) * fh);
	xml_str(out, m->program);
	fprintf(out, ": %zu inputs merged (%s)</text>\n", m->n_in,
		m->count_only ? "calls" : "self microseconds, summed");
	for (i = 1; i < n; i++) {
		double w = incl[i] * scale, y = (max_depth - depth[i] + 2) * fh;
		const char *name = m->rt[m->nodes[i].routine].name;
		unsigned h = (unsigned)hash_name(name);

		if (w < 0.5)
			continue;
		fprintf(out, "<g><title>");
		xml_str(out, name);
		fprintf(out,
			" (%.0f %s)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.0f\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			incl[i], m->count_only ? "calls" : "us", 10 + x[i] * scale, y, w, fh - 1,
			205 + h % 50, 80 + (h >> 8) % 150, (h >> 16) % 55);
		/* the name when it fits, about 7 px a character */
		if ((double)strlen(name) * 7 < w - 6) {
			fprintf(out,
				"<text x=\"%.1f\" y=\"%.1f\" font-family=\"monospace\" "
				"font-size=\"11\">",
				13 + x[i] * scale, y + fh - 5);
			xml_str(out, name);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</svg>\n", out);
	free(incl), free(x), free(next_x), free(depth), free(order);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
