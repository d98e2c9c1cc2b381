/* The flame graph is drawn here, in C: every frame is a <g> holding its
 * tooltip (<title>), its <rect> and its label, so the file is a picture
 * without the script. The script only reads the document (labels come from
 * the titles' text), never carries data from the target: target strings
 * appear only as escaped XML text and cannot close an element or run. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "flamegraph.h"
#include "grow.h"
#include "hash.h"
#include "labels.h"
#include "sanitize.h"
#include "walk/sample.h"
#include "order.h"

#define IMAGE_WIDTH 1200
#define PAD 10
#define FRAME_H 16
#define HEADER_H 84
#define FOOTER_H 30
#define CHAR_W 6.6     /* average advance of an 11px Verdana character */
#define THREAD_BIT 0x80000000u
#define PROC_BIT 0x40000000u   /* pseudo frame "process PID (command)": PROC_BIT | index */
#define NO_FRAMES 0u   /* pseudo frame: a sample without Python frames */

/* The profile's merged stacks: calltree's tree of paths, a node per frame
 * under its caller (its id: an interned frame, THREAD_BIT | slot, PROC_BIT |
 * process, or NO_FRAMES), and the drawn children of each node linked in
 * the order they are drawn. */
struct tree {
	struct calltree ct;
	uint32_t *first_child, *next_sibling;   /* 0 = none (node 0 is the root) */
};

static bool
build_tree(struct tree *t, const struct profile *p, const struct procset *ps, bool per_thread,
	   bool per_process)
{
	if (!calltree_start(&t->ct))
		return false;
	uint32_t *path = NULL, path_cap = 0;
	bool ok = true;
	for (uint32_t i = 0; i < p->count && ok; i++) {
		const struct profile_entry *e = &p->entries[i];
		if (!e->weight)
			continue;
		uint32_t proc = profile_entry_proc(e);
		if (proc != PROFILE_EXITED_PROC && !procset_at(ps, proc)->sampled)
			continue;
		const struct intern *in = &ps->in;
		uint32_t depth = e->stack_id ? intern_stack_at(in, e->stack_id)->depth : 0;
		if (!grow_array((void **)&path, &path_cap, depth + 3, sizeof *path)) {
			ok = false;
			break;
		}
		/* outermost first: the process, the thread, then the stack */
		uint32_t n = 0;
		if (per_process)
			path[n++] = PROC_BIT | proc;
		if (per_thread)
			path[n++] = THREAD_BIT | profile_entry_thread(ps, e);
		uint32_t frames = n;
		for (uint32_t s = e->stack_id; s; s = intern_stack_at(in, s)->parent)
			path[n++] = intern_stack_at(in, s)->frame;
		if (n == frames)
			path[n++] = NO_FRAMES;
		for (uint32_t a = frames, b = n; b > a + 1; a++, b--) {
			uint32_t tmp = path[a];
			path[a] = path[b - 1];
			path[b - 1] = tmp;
		}
		ok = calltree_add_path(&t->ct, path, n, e->weight) != UINT32_MAX;
	}
	free(path);
	return ok && calltree_finish(&t->ct);
}

static void
tree_free(struct tree *t)
{
	calltree_free(&t->ct);
	free(t->first_child);
	free(t->next_sibling);
}

/* ---------------------------------------------------------------------- */
/* Labels */

static const struct interned_func *
frame_func(const struct procset *ps, uint32_t frame, int32_t *line)
{
	const struct intern *in = &ps->in;
	const struct interned_frame *fr = intern_frame_at(in, frame);
	*line = fr->line;
	return intern_func_at(in, fr->func_id);
}

/* A frame's label, sanitized (visible escapes for control characters and
 * invalid UTF-8) but not yet escaped for XML. */
static void
node_label(const struct procset *ps, const struct ct_node *n, char *buf, size_t len)
{
	char a[1024], b[1024];
	uint32_t frame = n->func;
	if (frame == NO_FRAMES) {
		snprintf(buf, len, "<no Python frames>");
	} else if ((frame & THREAD_BIT) && (frame & ~THREAD_BIT) >= appendlog_count(ps->threads.log)) {
		snprintf(buf, len, "exited threads");
	} else if ((frame & PROC_BIT) && !(frame & THREAD_BIT) &&
		   (frame & ~PROC_BIT) == PROFILE_EXITED_PROC) {
		snprintf(buf, len, "exited processes");
	} else if (frame & PROC_BIT && !(frame & THREAD_BIT)) {
		const struct proc_info *p = procset_at(ps, frame & ~PROC_BIT);
		sanitize_for_terminal(procset_cmdline(p)[0] ? procset_cmdline(p) : "?", a, sizeof a);
		if (strlen(a) > 60) {  /* the start says what it is */
			size_t cut = 57;
			while (cut && ((unsigned char)a[cut] & 0xc0) == 0x80)
				cut--;
			memcpy(a + cut, "...", 4);
		}
		snprintf(buf, len, "process %d (%s)", (int)p->pid, a);
	} else if (frame & THREAD_BIT) {
		const struct thread_slot *s = procset_slot(ps, frame & ~THREAD_BIT);
		const char *name = atomic_load_explicit(&((struct thread_slot *)s)->name,
							memory_order_acquire);
		sanitize_for_terminal(name ? name : "?", a, sizeof a);
		snprintf(buf, len, "thread %llu %s", (unsigned long long)s->native_tid, a);
	} else {
		int32_t line;
		const struct interned_func *c = frame_func(ps, frame, &line);
		sanitize_for_terminal(c->qualname, a, sizeof a);
		sanitize_for_terminal(c->filename, b, sizeof b);
		if (c->kind == FUNC_MADE_UP)
			snprintf(buf, len, "%s", a); /* an asyncio task's marker */
		else if (c->kind == FUNC_NATIVE)
			snprintf(buf, len, "%s (%s)", a, b);   /* C code: symbol (library) */
		else
			snprintf(buf, len, "%s (%s:%d)", a, b, line);
	}
}

/* XML text, at most max_chars characters, then "..". */
static void
put_xml(FILE *f, const char *s, size_t max_chars)
{
	markup_put_text(f, s, strlen(s), max_chars, "..");
}

static size_t
utf8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* ---------------------------------------------------------------------- */
/* Colours: a stable hash of the function picks a warm colour (yellow to
 * orange); time spent in the frame itself pushes it to deep red, so the hot
 * end stands out. Native (C) code takes greens instead, its own time
 * darkening them. Threads are blue-grey, "all" and missing frames grey. */

static void
node_colour(const struct procset *ps, const struct ct_node *n, uint64_t grand, char *buf,
	    size_t len)
{
	if (n->depth == 0 || n->func == NO_FRAMES) {
		snprintf(buf, len, "#c8c8c8");
		return;
	}
	if (n->func & (THREAD_BIT | PROC_BIT)) {
		snprintf(buf, len, "#a8b8d0");
		return;
	}
	int32_t line;
	const struct interned_func *c = frame_func(ps, n->func, &line);
	uint32_t h = hash_mix64(hash_fnv(hash_fnv(HASH_FNV_SEED, c->qualname), c->filename));
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0,
	       v3 = ((h >> 16) & 0xff) / 255.0;
	double heat = grand ? (double)n->own / (double)grand * 4.0 : 0;
	if (heat > 1)
		heat = 1;
	if (c->kind == FUNC_NATIVE) {
		int r = (int)((60 + 60 * v1) * (1 - heat));
		int g = (int)((170 + 60 * v3) * (1 - heat) + 90 * heat);
		int b = (int)((70 + 50 * v2) * (1 - heat) + 30 * heat);
		snprintf(buf, len, "#%02x%02x%02x", r, g, b);
		return;
	}
	int r = 215 + (int)(40 * v3);
	int g = (int)((110 + 120 * v1) * (1 - heat) + 30 * heat);
	int b = (int)(60 * v2 * (1 - heat));
	snprintf(buf, len, "#%02x%02x%02x", r, g, b);
}

/* A differential flame graph: a frame's colour says how its share of the
 * samples moved against the baseline's share of the same call path: red
 * grew, blue shrank, light grey the same; full colour at DIFF_FULL_POINTS
 * percentage points or more. */
#define DIFF_FULL_POINTS 10.0

static void
diff_colour(double delta_points, char *buf, size_t len)
{
	double t = fabs(delta_points) / DIFF_FULL_POINTS;
	if (t > 1)
		t = 1;
	int strong = 255, weak = (int)(232 - 192 * t), grey = 232;
	if (delta_points > 0)
		snprintf(buf, len, "#%02x%02x%02x", strong, weak, weak);
	else if (delta_points < 0)
		snprintf(buf, len, "#%02x%02x%02x", weak, weak, strong);
	else
		snprintf(buf, len, "#%02x%02x%02x", grey, grey, grey);
}

/* The key of a node's call path in the baseline: its parent's chained
 * with its label as the collapsed format writes it. */
static uint64_t
diff_key(const struct procset *ps, const struct ct_node *n, uint64_t parent)
{
	char label[2400];
	uint32_t frame = n->func;
	if (n->depth == 0)
		return DIFFBASE_ROOT;
	if (frame == NO_FRAMES)
		snprintf(label, sizeof label, "<no Python frames>");
	else if ((frame & PROC_BIT) && !(frame & THREAD_BIT))
		profile_proc_label(ps, frame & ~PROC_BIT, label, sizeof label);
	else if (frame & THREAD_BIT)
		profile_thread_label(ps, (frame & ~THREAD_BIT) >= appendlog_count(ps->threads.log)
						 ? PROFILE_EXITED_SLOT : frame & ~THREAD_BIT,
				     label, sizeof label);
	else
		profile_frame_label(&ps->in, frame, label, sizeof label);
	return diffbase_key(parent, label);
}

/* ---------------------------------------------------------------------- */
/* Layout and output */

/* Drawn children by their node index, in the order they are drawn. */
struct child_order {
	const struct procset *ps;
	const struct ct_node *nodes;
};

static int
cmp_children(const void *a, const void *b, void *ctx)
{
	const struct child_order *o = ctx;
	const struct procset *ps = o->ps;
	const struct ct_node *x = &o->nodes[*(const uint32_t *)a], *y = &o->nodes[*(const uint32_t *)b];
	bool tx = x->func & (THREAD_BIT | PROC_BIT), ty = y->func & (THREAD_BIT | PROC_BIT);
	if (tx || ty || x->func == NO_FRAMES || y->func == NO_FRAMES)
		return x->func < y->func ? -1 : x->func > y->func;
	int32_t lx, ly;
	const struct interned_func *cx = frame_func(ps, x->func, &lx);
	const struct interned_func *cy = frame_func(ps, y->func, &ly);
	int c = strcmp(cx->qualname, cy->qualname);
	if (!c)
		c = strcmp(cx->filename, cy->filename);
	if (!c)
		c = lx < ly ? -1 : lx > ly;
	if (!c)
		c = x->func < y->func ? -1 : x->func > y->func;
	return c;
}

/* Link the children that will be drawn (at least min samples), in
 * alphabetical order (flamegraph.pl's: stable across runs); the ones too
 * narrow to draw are left out of the lists and their room stays at the
 * right end of their parent. Sorting only drawn frames keeps big profiles
 * fast: most nodes of a 50,000-stack profile are never drawn. */
static bool
link_children(struct tree *t, const struct procset *ps, uint64_t min)
{
	const struct calltree *ct = &t->ct;
	t->first_child = calloc(ct->n, sizeof *t->first_child);
	t->next_sibling = calloc(ct->n, sizeof *t->next_sibling);
	uint32_t *drawn = malloc((ct->n ? ct->n : 1) * sizeof *drawn);
	if (!t->first_child || !t->next_sibling || !drawn) {
		free(drawn);
		return false;
	}
	struct child_order order = {ps, ct->nodes};
	for (uint32_t i = 0; i < ct->n; i++) {
		/* calltree's children of i, in the order they were made */
		const struct ct_node *p = &ct->nodes[i];
		uint32_t n = 0;
		for (uint32_t k = 0; k < p->nkids; k++)
			if (ct->nodes[ct->kids[p->kids + k]].total >= min)
				drawn[n++] = ct->kids[p->kids + k];
		if (n > 1)
			qsort_r(drawn, n, sizeof *drawn, cmp_children, &order);
		uint32_t next = 0;
		for (uint32_t k = n; k-- > 0;) {
			t->next_sibling[drawn[k]] = next;
			next = drawn[k];
		}
		t->first_child[i] = next;
	}
	free(drawn);
	return true;
}

static int
cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The fewest samples a drawn frame has: FLAMEGRAPH_MIN_WIDTH_PX wide, or
 * more when that would draw more than FLAMEGRAPH_MAX_FRAMES frames. A
 * child never outweighs its parent, so a threshold on weight keeps every
 * drawn frame's parent drawn. */
static uint64_t
min_samples(const struct tree *t, double frame_width)
{
	uint64_t grand = t->ct.nodes[0].total;
	uint64_t min = (uint64_t)ceil(FLAMEGRAPH_MIN_WIDTH_PX / frame_width * (double)grand);
	if (min < 1)
		min = 1;
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->ct.n; i++)
		n += t->ct.nodes[i].total >= min;
	if (n <= FLAMEGRAPH_MAX_FRAMES)
		return min;
	uint64_t *w = malloc(n * sizeof *w);
	if (!w)
		return grand; /* only the root: still a valid file */
	n = 0;
	for (uint32_t i = 0; i < t->ct.n; i++)
		if (t->ct.nodes[i].total >= min)
			w[n++] = t->ct.nodes[i].total;
	order_sort(w, n, sizeof *w, cmp_u64_desc);
	/* ties at the cut would go over: draw strictly heavier ones */
	uint64_t cut = w[FLAMEGRAPH_MAX_FRAMES - 1];
	if (w[FLAMEGRAPH_MAX_FRAMES] == cut)
		cut++;
	free(w);
	return cut > min ? cut : min;
}

/* The script: zoom, search, details on hover. It reads everything from the
 * document; only numbers written by us precede it. */
static const char script[] =
	"(function(){\n"
	"'use strict';\n"
	"var frames=document.getElementById('frames'),gs=frames.children,n=gs.length;\n"
	"var ox=new Float64Array(n),ow=new Float64Array(n),oy=new Float64Array(n),lab=[],"
	"info=[],fill=[],rects=[],texts=[];\n"
	"for(var i=0;i<n;i++){var g=gs[i],t=g.children[0].textContent,k=t.lastIndexOf('\\n');\n"
	" lab.push(k<0?t:t.slice(0,k));info.push(k<0?'':t.slice(k+1));\n"
	" var r=g.children[1];rects.push(r);texts.push(g.children[2]||null);fill.push(r.getAttribute('fill'));\n"
	" ox[i]=+r.getAttribute('x');ow[i]=+r.getAttribute('width');oy[i]=+r.getAttribute('y');g._i=i;}\n"
	"var details=document.getElementById('details'),matched=document.getElementById('matched'),"
	"reset=document.getElementById('reset'),input=document.getElementById('search');\n"
	"function fit(i,x,w){var s=lab[i],m=Math.floor((w-6)/CW),t=texts[i];\n"
	" if(!t){if(m<3)return;t=texts[i]=document.createElementNS('http://www.w3.org/2000/svg','text');"
	"t.setAttribute('y',oy[i]+FH-4);gs[i].appendChild(t);}\n"
	" t.setAttribute('x',(x+3).toFixed(2));t.textContent=m<3?'':s.length<=m?s:s.slice(0,m-2)+'..';}\n"
	"function place(i,x,w){rects[i].setAttribute('x',x.toFixed(2));"
	"rects[i].setAttribute('width',w.toFixed(2));fit(i,x,w);}\n"
	"var zoomed=-1;\n"
	"function zoom(z){zoomed=z;var zx=ox[z],zw=ow[z],zy=oy[z],s=FW/zw,e=1e-6*FW;\n"
	" for(var i=0;i<n;i++){var g=gs[i];\n"
	"  if(oy[i]>zy&&ox[i]<=zx+e&&ox[i]+ow[i]>=zx+zw-e){g.style.display='';g.setAttribute('class','anc');place(i,PAD,FW);}\n"
	"  else if(oy[i]<=zy&&ox[i]>=zx-e&&ox[i]+ow[i]<=zx+zw+e){g.style.display='';g.removeAttribute('class');"
	"place(i,PAD+(ox[i]-zx)*s,ow[i]*s);}\n"
	"  else g.style.display='none';}\n"
	" reset.style.display='';}\n"
	"function unzoom(){zoomed=-1;for(var i=0;i<n;i++){gs[i].style.display='';"
	"gs[i].removeAttribute('class');place(i,ox[i],ow[i]);}reset.style.display='none';}\n"
	"function search(term){var re=null;\n"
	" if(term){try{re=new RegExp(term);}catch(x){re=new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g,'\\\\$&'));}}\n"
	" var hits=[];\n"
	" for(var i=0;i<n;i++){var m=re!==null&&re.test(lab[i]);\n"
	"  rects[i].setAttribute('fill',m?'#e040e0':fill[i]);\n"
	"  if(m){gs[i].setAttribute('data-match','1');hits.push(i);}else gs[i].removeAttribute('data-match');}\n"
	" if(re===null){matched.textContent='';return;}\n"
	" hits.sort(function(a,b){return ox[a]-ox[b];});\n"
	" var sum=0,end=-1;\n"
	" for(var j=0;j<hits.length;j++){var a=ox[hits[j]],b=a+ow[hits[j]];\n"
	"  if(a>=end){sum+=b-a;end=b;}else if(b>end){sum+=b-end;end=b;}}\n"
	" matched.textContent='Matched: '+(100*sum/FW).toFixed(2)+'% ('+hits.length+(hits.length===1?' frame)':' frames)');}\n"
	"frames.addEventListener('click',function(ev){var g=ev.target.closest('g');"
	"if(g&&g._i!==undefined)zoom(g._i);});\n"
	"frames.addEventListener('mouseover',function(ev){var g=ev.target.closest('g');"
	"if(g&&g._i!==undefined)details.textContent=lab[g._i]+' \\u2014 '+info[g._i];});\n"
	"frames.addEventListener('mouseout',function(){details.textContent='';});\n"
	"reset.addEventListener('click',unzoom);\n"
	"if(input){input.addEventListener('input',function(){search(input.value);});}\n"
	"document.addEventListener('keydown',function(ev){\n"
	" if(ev.key==='Escape'){unzoom();if(input){input.value='';}search('');}\n"
	" else if((ev.key==='f'&&(ev.ctrlKey||ev.metaKey))||(ev.key==='/'&&ev.target!==input)){"
	"if(input){ev.preventDefault();input.focus();}}});\n"
	"var q=/[?&]s=([^&]*)/.exec(location.search);\n"
	"if(q){var term=decodeURIComponent(q[1].replace(/\\+/g,' '));if(input)input.value=term;search(term);}\n"
	"})();\n";

static const char style[] =
	"text{font-family:Verdana,'DejaVu Sans',sans-serif;font-size:12px;fill:#000}\n"
	"#frames text{font-size:11px;pointer-events:none}\n"
	"#frames g{cursor:pointer}\n"
	"#frames g:hover rect{stroke:#000;stroke-width:0.6}\n"
	"#frames g.anc rect{opacity:0.55}\n"
	"#heading{font-size:17px;font-weight:bold}\n"
	"#subtitle,#legend{fill:#333}\n"
	"#reset{cursor:pointer;fill:#0645ad;font-weight:bold}\n"
	"#matched{fill:#a000a0;font-weight:bold}\n"
	"input{font:12px Verdana,sans-serif;width:230px;box-sizing:border-box}\n";

static void
describe(const struct export_meta *m, uint64_t samples, char *heading, size_t hlen,
	 char *sub, size_t slen)
{
	char cmd[512];
	sanitize_for_terminal(m->command && m->command[0] ? m->command : "?", cmd, sizeof cmd);
	snprintf(heading, hlen, "pid %d: %s", (int)m->pid, cmd);
	char rate[48];
	if (m->rate_hz > 0)
		snprintf(rate, sizeof rate, "%g Hz", m->rate_hz);
	else
		snprintf(rate, sizeof rate, "max rate");
	char version[48];
	sanitize_for_terminal(m->python_version ? m->python_version : "?", version, sizeof version);
	snprintf(sub, slen, "Python %s \xc2\xb7 %s mode \xc2\xb7 %.1f s at %s \xc2\xb7 %llu samples",
		 version, export_mode_name(m->mode), (double)m->duration_ns / 1e9, rate,
		 (unsigned long long)samples);
}

/* The SVG's prologue: title, style, heading, legend, the search box. */
static void
put_head(FILE *f, const char *heading, const char *sub, int height, uint32_t hidden,
	 double hidden_px, bool diff)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		   "height=\"%d\" viewBox=\"0 0 %d %d\">\n<title>tachyon-top: ",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height);
	put_xml(f, heading, SIZE_MAX);
	fputs("</title>\n<style type=\"text/css\"><![CDATA[\n", f);
	fputs(style, f);
	fputs("]]></style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfaf4\"/>\n",
		IMAGE_WIDTH, height);
	fprintf(f, "<text id=\"heading\" x=\"%d\" y=\"24\">", PAD);
	put_xml(f, heading, 150);
	fprintf(f, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"44\">", PAD);
	put_xml(f, sub, SIZE_MAX);
	if (diff)
		fprintf(f, "</text>\n<text id=\"legend\" x=\"%d\" y=\"62\">width: share of this "
			   "run's samples; colour: its change against the baseline's share, red grew, "
			   "blue shrank, grey the same (full at %.0f points); click to zoom", PAD,
			DIFF_FULL_POINTS);
	else
		fprintf(f, "</text>\n<text id=\"legend\" x=\"%d\" y=\"62\">width: share of "
			   "samples; colour: by function, redder = more time in the frame itself; "
			   "click a frame to zoom, Esc to reset", PAD);
	if (hidden)
		fprintf(f, "; %u frames narrower than %.2f px not drawn", hidden, hidden_px);
	fputs("</text>\n", f);
	fprintf(f, "<text id=\"reset\" x=\"%d\" y=\"78\" style=\"display:none\">Reset zoom</text>\n",
		PAD);
	fprintf(f, "<foreignObject x=\"%d\" y=\"8\" width=\"240\" height=\"26\">"
		   "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
		   "placeholder=\"Search (regular expression)\"/></foreignObject>\n",
		IMAGE_WIDTH - PAD - 240);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		IMAGE_WIDTH - PAD, height - 10);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"></text>\n", PAD, height - 10);
}

/* One frame: its tooltip, its box and, when it fits, its label. */
/* A differential flame graph's two sides: the baseline's samples by call
 * path, this run's by the same keys (frames of one function at two lines
 * are one path on both sides), and each node's key. */
struct diff {
	const struct diff_base *base;
	struct diff_base now;
	uint64_t *keys;
};

static bool
diff_build(struct diff *d, const struct tree *t, const struct procset *ps,
	   const struct diff_base *base)
{
	memset(d, 0, sizeof *d);
	diffbase_init(&d->now);
	d->base = base;
	d->keys = malloc((t->ct.n ? t->ct.n : 1) * sizeof *d->keys);
	if (!d->keys)
		return false;
	/* a parent is created before its children: its key is known */
	d->keys[0] = DIFFBASE_ROOT;
	d->now.total = t->ct.nodes[0].total;
	for (uint32_t i = 1; i < t->ct.n; i++) {
		d->keys[i] = diff_key(ps, &t->ct.nodes[i], d->keys[t->ct.nodes[i].parent]);
		if (!diffbase_add(&d->now, d->keys[i], t->ct.nodes[i].total))
			return false;
	}
	return true;
}

static void
diff_free(struct diff *d)
{
	free(d->keys);
	diffbase_free(&d->now);
}

static void
put_frame(FILE *f, const struct procset *ps, const struct tree *t, uint32_t index, uint64_t grand,
	  double x, double width, int y, const struct diff *d)
{
	const struct ct_node *n = &t->ct.nodes[index];
	char label[2400], colour[16];
	if (n->depth == 0)
		snprintf(label, sizeof label, "all");
	else
		node_label(ps, n, label, sizeof label);
	double share = 100.0 * (double)n->total / (double)grand, was = 0, is = 0;
	uint64_t base_samples = 0;
	if (d) {
		uint64_t key = d->keys[index];
		base_samples = diffbase_samples(d->base, key);
		was = 100.0 * (double)base_samples / (double)d->base->total;
		is = 100.0 * (double)diffbase_samples(&d->now, key) / (double)grand;
		diff_colour(is - was, colour, sizeof colour);
	} else {
		node_colour(ps, n, grand, colour, sizeof colour);
	}
	fputs("<g><title>", f);
	put_xml(f, label, SIZE_MAX);
	fprintf(f, "\n%llu samples, %.2f%%", (unsigned long long)n->total, share);
	if (d && base_samples)
		fprintf(f, "; this call path %.2f%%, in the baseline %.2f%%: %+.2f points", is, was,
			is - was);
	else if (d)
		fputs("; this call path is not in the baseline", f);
	else if (n->own && t->first_child[index])
		fprintf(f, " (%.2f%% in the frame itself)", 100.0 * (double)n->own / (double)grand);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		   "fill=\"%s\" rx=\"2\"/>",
		x, y, width, FRAME_H - 1, colour);
	/* Only frames wide enough for a label get a <text>: most frames of
	 * a big profile are narrow, and empty texts cost the browser a
	 * fifth of the file's opening time. The script adds one on zoom. */
	double fits = floor((width - 6) / CHAR_W);
	if (fits >= 3) {
		fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FRAME_H - 4);
		put_xml(f, label, (double)utf8_chars(label) <= fits ? SIZE_MAX : (size_t)fits - 2);
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

/* Every linked frame, root first, each child from its parent's x; -1 when
 * memory is short. */
static int
put_frames(FILE *f, const struct tree *t, const struct procset *ps, uint32_t depth, double fw,
	   const struct diff *d)
{
	uint64_t grand = t->ct.nodes[0].total;
	if (!grand)
		return 0;
	/* Pre-order walk with an explicit stack: (node, x in samples). */
	struct item {
		uint32_t node;
		uint64_t x;
	} *stack = NULL;
	uint32_t sp = 0, cap = 0;
	if (!grow_array((void **)&stack, &cap, 1, sizeof *stack))
		return -1;
	stack[sp++] = (struct item){0, 0};
	double scale = fw / (double)grand;
	while (sp > 0) {
		struct item it = stack[--sp];
		const struct ct_node *n = &t->ct.nodes[it.node];
		put_frame(f, ps, t, it.node, grand, PAD + (double)it.x * scale, (double)n->total * scale,
			  HEADER_H + (int)(depth - n->depth) * FRAME_H, d);
		/* Drawn children follow each other from the parent's x; pushed,
		 * then reversed, so the leftmost pops first. */
		uint64_t cx = it.x;
		uint32_t first = sp;
		for (uint32_t c = t->first_child[it.node]; c; c = t->next_sibling[c]) {
			if (!grow_array((void **)&stack, &cap, sp + 1, sizeof *stack)) {
				free(stack);
				return -1;
			}
			stack[sp++] = (struct item){c, cx};
			cx += t->ct.nodes[c].total;
		}
		for (uint32_t a = first, b = sp; b > a + 1; a++, b--) {
			struct item tmp = stack[a];
			stack[a] = stack[b - 1];
			stack[b - 1] = tmp;
		}
	}
	free(stack);
	return 0;
}

int
flamegraph_write(const struct profile *p, const struct procset *ps,
		 const struct export_meta *meta, FILE *f)
{
	struct tree t = {0};
	const double fw = IMAGE_WIDTH - 2 * PAD;
	bool built = build_tree(&t, p, ps, meta->per_thread, meta->per_process);
	uint64_t min = built ? min_samples(&t, fw) : 0;
	if (!built || !link_children(&t, ps, min)) {
		tree_free(&t);
		return -1;
	}
	uint64_t grand = t.ct.nodes[0].total;
	/* Drawn depth: the deepest frame heavy enough to draw. */
	uint32_t depth = 0, hidden = 0;
	for (uint32_t i = 0; i < t.ct.n; i++) {
		if (t.ct.nodes[i].total >= min) {
			if (t.ct.nodes[i].depth > depth)
				depth = t.ct.nodes[i].depth;
		} else {
			hidden++;
		}
	}
	int height = HEADER_H + (int)(depth + 1) * FRAME_H + FOOTER_H;
	char heading[700], sub[700];
	describe(meta, grand, heading, sizeof heading, sub, sizeof sub);
	if (meta->diff_base) {
		char name[300];
		sanitize_for_terminal(meta->diff_base_name ? meta->diff_base_name : "?", name,
				      sizeof name);
		size_t used = strlen(sub);
		snprintf(sub + used, sizeof sub - used, " \xc2\xb7 against %s (%llu samples)", name,
			 (unsigned long long)meta->diff_base->total);
	}
	put_head(f, heading, sub, height, hidden, fw * (double)min / (double)(grand ? grand : 1),
		 meta->diff_base != NULL);
	fputs("<g id=\"frames\">\n", f);
	struct diff diff;
	bool diffing = meta->diff_base != NULL;
	int rc = diffing && !diff_build(&diff, &t, ps, meta->diff_base)
			 ? -1 : put_frames(f, &t, ps, depth, fw, diffing ? &diff : NULL);
	if (diffing)
		diff_free(&diff);
	fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", f);
	fprintf(f, "var FW=%.2f,PAD=%d,CW=%.2f,FH=%d;\n", fw, PAD, CHAR_W, FRAME_H);
	fputs(script, f);
	fputs("]]></script>\n</svg>\n", f);
	tree_free(&t);
	return rc == 0 && !ferror(f) ? 0 : -1;
}
