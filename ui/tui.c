/* The live screen's loop and terminal handling. ncurses owns the terminal
 * and draws; libtermkey parses keys from stdin (ncurses never reads input);
 * signals arrive through a self-pipe. The screen is restored on every way
 * out: q, Ctrl-C, SIGTERM/SIGHUP, the target ending, errors, and crashes. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "export.h"
#include "outfile.h"
#include "profile.h"
#include "theme.h"
#include "frameview.h"
#include "tui.h"
#include "baseline.h"
#include "tasksview.h"
#include "threadsview.h"
#include "ui.h"

#ifndef THEMEDIR
#define THEMEDIR "/usr/local/share/tachyon-top/themes"
#endif

/* How often the ring is drained while nothing else happens. */
#define DRAIN_MS 20

static struct termios saved_termios;
static bool have_saved_termios;
static volatile sig_atomic_t screen_up;

/* A crash must not leave the terminal raw: restore it with async-signal-
 * safe calls only, then die of the same signal. */
static void
on_fatal(int sig)
{
	if (screen_up) {
		static const char reset[] = "\033[?1049l\033[?25h\033[0m\r\n";
		if (write(STDOUT_FILENO, reset, sizeof reset - 1) < 0) {
			/* nothing more we can do */
		}
		if (have_saved_termios)
			tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void
ui_message(struct ui *u, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->message, sizeof u->message, fmt, ap);
	va_end(ap);
	u->message_is_error = error;
	u->message_until_ns = clock_now_ns() + 6000000000ull;
	u->dirty = true;
}

void
ui_export_prompt(struct ui *u)
{
	u->choosing_export = true;
	ui_message(u, false, "export the session as: f flame graph (.svg)  p pprof (.pb.gz)  "
		   "s speedscope (.json)  c collapsed  t pstats (.prof)  h heatmap (.html)  "
		   "a all six  (any other key cancels)");
	u->message_until_ns = UINT64_MAX;
}

/* Prepare base+extension for writing, all or nothing (outfile.h), in
 * --export-dir or else the working directory, falling back to /tmp when
 * that is not writable (but not when a directory was asked for); *path
 * receives the full path. */
static tt_status
open_export(const struct ui *u, const char *base, const char *ext, char *path, size_t len,
	    struct outfile *o, struct tt_error *err)
{
	const char *want = u->opt->export_dir ? u->opt->export_dir : ".";
	char dir[PATH_MAX];
	if (!realpath(want, dir))
		snprintf(dir, sizeof dir, "%s", want);
	snprintf(path, len, "%s%s%s%s", dir, strcmp(dir, "/") ? "/" : "", base, ext);
	tt_status st = outfile_open(o, path, err);
	if (st == TT_OK || u->opt->export_dir)
		return st;
	snprintf(path, len, "/tmp/%s%s", base, ext);
	return outfile_open(o, path, err);
}

void
ui_export(struct ui *u, int format)
{
	struct profile p;
	if (!agg_to_profile(&u->agg, AGG_SESSION, u->mode, &p)) {
		ui_message(u, true, "export failed: out of memory");
		return;
	}
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char stamp[32], base[96];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	snprintf(base, sizeof base, "tachyon-top-%d-%s", (int)u->s->pid, stamp);
	uint64_t elapsed = atomic_load(&u->s->sampler.stats.elapsed_ns);
	uint64_t passes = atomic_load(&u->s->sampler.stats.samples);
	static const enum profile_filter filters[AGG_MODE_COUNT] = {
		[AGG_WALL] = PROFILE_WALL, [AGG_CPU] = PROFILE_CPU, [AGG_GIL] = PROFILE_GIL,
		[AGG_EXCEPTION] = PROFILE_WALL,
	};
	struct export_meta meta = {
		.pid = u->s->pid, .command = u->s->cmdline,
		.python_version = u->s->target.layout.version_str, .mode = filters[u->mode],
		.rate_hz = u->s->rate_hz, .duration_ns = elapsed,
		.start_unix_ns = (uint64_t)(now - (time_t)(elapsed / 1000000000ull)) * 1000000000ull,
		.period_ns = passes ? elapsed / passes : u->s->rate_hz > 0 ? (uint64_t)(1e9 / u->s->rate_hz) : 1,
		/* a tree: split by process as record --subprocesses does */
		.per_process = procset_count(&u->s->sampler.procs) > 1,
	};
	export_sources_open(&meta.sources, u->s->target.pid);
	/* The message names every file: one path, or for all formats the
	 * shared stem and each extension, shell-style (stem.{svg,pb.gz}). */
	char path[PATH_MAX + 128], stem[PATH_MAX + 128] = "", exts[160] = "", list[PATH_MAX + 900] = "";
	bool same_stem = true, ok = true;
	int first = format < 0 ? 0 : format, last = format < 0 ? EXPORT_PROFILE_FORMATS - 1 : format;
	for (int i = first; i <= last && ok; i++) {
		enum export_format fmt = (enum export_format)i;
		const char *ext = export_format_extension(fmt);
		struct outfile o;
		struct tt_error e = {0};
		if (open_export(u, base, ext, path, sizeof path, &o, &e) != TT_OK) {
			ui_message(u, true, "export failed: %s", e.msg);
			ok = false;
		} else if (export_commit(fmt, &p, &u->s->sampler.procs, &meta, &o, path, &e) !=
			   TT_OK) {
			ui_message(u, true, "export failed: %s", e.msg);
			ok = false;
		}
		if (!ok)
			break;
		size_t lused = strlen(list);
		snprintf(list + lused, sizeof list - lused, "%s%s", lused ? " " : "", path);
		path[strlen(path) - strlen(ext)] = '\0';
		if (i == first)
			snprintf(stem, sizeof stem, "%s", path);
		else if (strcmp(stem, path) != 0)
			same_stem = false;
		size_t used = strlen(exts);
		snprintf(exts + used, sizeof exts - used, "%s%s", used ? "," : "", ext + 1);
	}
	if (ok) {
		char written[900];
		if (first == last)
			snprintf(written, sizeof written, "%s.%s", stem, exts);
		else if (same_stem)
			snprintf(written, sizeof written, "%s.{%s}", stem, exts);
		else
			snprintf(written, sizeof written, "%s", list);
		/* the paths first: a narrow screen cuts the counts, not the names */
		ui_message(u, false, "wrote %s (%u stacks, %llu samples)", written, p.count,
			   (unsigned long long)p.total);
	}
	profile_free(&p);
	export_sources_close(&meta.sources);
}

/* The drain's sink: the counts, and what `watch` would report. */
static void
take(void *ctx, const struct sample_record *r, size_t n)
{
	struct ui *u = ctx;
	agg_take(&u->agg, r, n);
	stuckwatch_take(&u->stuck, &u->s->sampler.procs, r, n);
}

static void
drain(struct ui *u)
{
	sampler_drain(&u->s->sampler, take, u);
}

static void
check_finished(struct ui *u)
{
	if (u->finished)
		return;
	session_poll_child(u->s);
	enum sampler_end how = sampler_end_state(&u->s->sampler);
	if (how == SAMPLER_RUNNING && !u->s->child_exited)
		return;
	if (u->s->child && !u->s->child_exited && how == SAMPLER_TARGET_EXITED) {
		/* The sampler saw it go; give waitpid a moment for the status
		 * (the loop keeps polling for it afterwards). */
		for (int i = 0; i < 50 && !u->s->child_exited; i++) {
			struct timespec ts = {0, 4000000L};
			nanosleep(&ts, NULL);
			session_poll_child(u->s);
		}
	}
	u->finished = true;
	u->finished_ns = clock_now_ns();
	if (u->s->child && u->s->child_exited) {
		char how_s[96];
		session_describe_exit(u->s, how_s, sizeof how_s);
		snprintf(u->finished_text, sizeof u->finished_text, "process %s", how_s);
	} else if (how == SAMPLER_TARGET_EXITED) {
		snprintf(u->finished_text, sizeof u->finished_text, "process %d exited",
			 (int)u->s->pid);
	} else if (how == SAMPLER_DURATION) {
		snprintf(u->finished_text, sizeof u->finished_text, "sampling ended (duration reached)");
	} else if (how == SAMPLER_FAILED) {
		snprintf(u->finished_text, sizeof u->finished_text, "sampling failed: %s",
			 u->s->sampler.error.msg);
	} else {
		snprintf(u->finished_text, sizeof u->finished_text, "sampling stopped");
	}
	sampler_stop(&u->s->sampler);
	drain(u);
	/* A process that is gone waits for nothing. */
	free(waitwatch_take(u->s->waitwatch));
	free(u->kw);
	u->kw = NULL;
	/* Nothing more arrives: the whole session is what there is to see,
	 * from its hottest row. */
	agg_roll_window(&u->agg, clock_now_ns());
	u->scope = AGG_SESSION;
	tableview_restart(u);
	views_rebuild(u);
	u->dirty = true;
}

static void
install_signals(void)
{
	/* The session's stop signals and the screen's own, through the
	 * session's pipe (set up by session_catch_signals before it starts). */
	int wake[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCONT};
	struct tt_error ignored;
	session_catch_signals(wake, sizeof wake / sizeof wake[0], &ignored);
	/* A crash must restore the terminal: not a session's business. */
	struct sigaction fatal = {.sa_handler = on_fatal};
	sigemptyset(&fatal.sa_mask);
	int die[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	for (size_t i = 0; i < sizeof die / sizeof die[0]; i++)
		sigaction(die[i], &fatal, NULL);
	signal(SIGTSTP, SIG_IGN); /* raw mode: ^Z arrives as a key */
	signal(SIGPIPE, SIG_IGN);
}

/* Messages written to stderr while the screen is up go to a temporary file
 * and are shown after the screen is gone. */
static int
stderr_to_file(FILE **tmp)
{
	*tmp = tmpfile();
	if (!*tmp)
		return -1;
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	if (saved < 0 || dup2(fileno(*tmp), STDERR_FILENO) < 0) {
		if (saved >= 0)
			close(saved);
		fclose(*tmp);
		*tmp = NULL;
		return -1;
	}
	return saved;
}

static void
stderr_restore(int saved, FILE *tmp)
{
	if (saved < 0)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	if (!tmp)
		return;
	rewind(tmp);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, tmp)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(tmp);
}

static void
handle_signal_byte(struct ui *u, unsigned char sig)
{
	if (sig == SIGWINCH || sig == SIGCONT) {
		/* ncurses learns the new size from the terminal. */
		endwin();
		refresh();
		getmaxyx(stdscr, u->rows, u->cols);
		clearok(curscr, TRUE);
		u->dirty = true;
	} else {
		u->quit = true;
	}
}

/* The theme named by --theme: installed, else (run from the build tree)
 * the source's themes. */
static tt_status
load_theme(const struct live_options *o, struct theme *theme, char *warnings, size_t wlen,
	   struct tt_error *e)
{
	char err_text[512] = "";
	warnings[0] = '\0';
	int tl = theme_load(o->theme, THEMEDIR, theme, warnings, wlen, err_text, sizeof err_text);
#ifdef SRC_THEMEDIR
	if (tl != 0 && !strchr(o->theme, '/')) {
		warnings[0] = '\0';
		tl = theme_load(o->theme, SRC_THEMEDIR, theme, warnings, wlen, err_text,
				sizeof err_text);
	}
#endif
	if (tl != 0)
		return tt_fail(e, TT_EUSAGE, 0, "--theme %s: %s", o->theme, err_text);
	return TT_OK;
}

tt_status
tui_check_theme(const struct live_options *o, struct tt_error *err)
{
	struct theme theme;
	char warnings[2048];
	return load_theme(o, &theme, warnings, sizeof warnings, err);
}

/* The view's state before the first screen. */
static void
ui_setup(struct ui *u, const struct live_options *o, struct session *s)
{
	memset(u, 0, sizeof *u);
	u->opt = o;
	u->s = s;
	u->mode = o->mode;
	u->sort = o->sort;
	u->by_line = o->by_line;
	u->slot = -1;
	u->proc = -1;
	u->show_procs = true;
	u->scope = AGG_WINDOW;
	u->show_threads = true;
	u->start_ns = clock_now_ns();
	u->delay_ns = (uint64_t)(o->delay_s * 1e9);
	u->next_roll_ns = u->start_ns + u->delay_ns;
	u->table = tableview_new();
	u->stack[0] = VIEW_TABLE;
	u->nstack = 1;
	u->tasks = tasksview_new();
	u->threads = threadsview_new();
	u->frames = frameview_new();
	agg_init(&u->agg, &s->sampler.procs, u->start_ns);
	/* the tasks view's marks need a stuck task's connections read */
	if (s->watching_tasks)
		atomic_store(&s->tasks.peers_after_ns, (uint64_t)(o->stuck_s * 1e9));
	stuckwatch_init(&u->stuck, &s->sampler.procs.in, (uint64_t)(o->stuck_s * 1e9),
			(uint64_t)(o->loop_ms * 1e6), (uint64_t)(o->spin_s * 1e9),
			5ull * 1000000000ull);
}

/* One turn of the loop: what the sampler sent, the window's roll, the
 * kernel watcher's look, the end of the target, and the screen. */
static void
advance(struct ui *u)
{
	uint64_t now = clock_now_ns();
	if (!u->finished) {
		bool may_roll = sampler_window_may_roll(&u->s->sampler, now - u->start_ns, u->delay_ns);
		drain(u);
		if (now >= u->next_roll_ns && may_roll) {
			agg_roll_window(&u->agg, now);
			u->next_roll_ns += u->delay_ns;
			if (u->next_roll_ns < now)
				u->next_roll_ns = now + u->delay_ns;
			if (!u->paused) {
				views_rebuild(u);
				u->dirty = true;
			}
			procs_note_changes(u);
		}
		/* The kernel watcher's newest look, a few times a second. */
		struct waitwatch_snapshot *kw = waitwatch_take(u->s->waitwatch);
		if (kw) {
			free(u->kw);
			u->kw = kw;
			stuckwatch_waits(&u->stuck, &u->s->sampler.procs, kw, u->s->sampler.start_ns);
			if (!u->paused)
				u->dirty = true;
		}
		check_finished(u);
	}
	/* A started command's exit status may come after the sampler
	 * noticed it was gone. */
	if (u->finished && u->s->child && !u->s->child_exited) {
		session_poll_child(u->s);
		if (u->s->child_exited) {
			char how_s[96];
			session_describe_exit(u->s, how_s, sizeof how_s);
			snprintf(u->finished_text, sizeof u->finished_text, "process %s", how_s);
			u->dirty = true;
		}
	}
	tasksview_poll(u);
	if (u->message[0] && now > u->message_until_ns) {
		u->message[0] = '\0';
		u->dirty = true;
	}
	if (u->dirty) {
		views_draw(u);
		u->dirty = false;
	}
}

/* Waits for a key, a signal or the sampler, and handles the keys; false
 * when waiting failed. */
static bool
wait_for_keys(struct ui *u, TermKey *tk)
{
	int timeout = DRAIN_MS;
	if (u->finished)
		timeout = 500;
	struct pollfd pfd[3] = {
		{.fd = STDIN_FILENO, .events = POLLIN},
		{.fd = session_signal_fd(), .events = POLLIN},
		{.fd = u->finished ? -1 : u->s->sampler.wake_fd, .events = POLLIN},
	};
	int wait = termkey_get_waittime(tk);
	int r = poll(pfd, 3, timeout);
	if (r < 0 && errno != EINTR)
		return false;
	if (pfd[1].revents & POLLIN) {
		int sig;
		while ((sig = session_next_signal()) != 0)
			handle_signal_byte(u, (unsigned char)sig);
	}
	if (pfd[0].revents & (POLLHUP | POLLERR))
		u->quit = true;
	TermKeyKey key;
	TermKeyResult res;
	if (pfd[0].revents & POLLIN)
		termkey_advisereadable(tk);
	while ((res = termkey_getkey(tk, &key)) == TERMKEY_RES_KEY)
		keys_handle(u, tk, &key);
	/* A lone Escape: no more bytes came within termkey's wait time. */
	if (res == TERMKEY_RES_AGAIN && r == 0 && wait >= 0 &&
	    termkey_getkey_force(tk, &key) == TERMKEY_RES_KEY)
		keys_handle(u, tk, &key);
	if (res == TERMKEY_RES_EOF)
		u->quit = true;
	return true;
}

static void
ui_release(struct ui *u)
{
	free(u->kw);
	treeviews_free(u);
	tableview_free(u->table);
	agg_free(&u->agg);
	stuckwatch_free(&u->stuck);
	free(u->procs_reported);
	tasksview_free(u->tasks);
	baseline_free(u->baseline);
	threadsview_free(u->threads);
	frameview_free(u->frames);
}

tt_status
tui_run(const struct live_options *o, struct tt_error *err)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return tt_fail(err, TT_EUSAGE, 0,
			       "the live view needs a terminal (use --batch for plain text)");
	/* Everything that can fail plainly fails before the screen is up. */
	struct theme theme;
	char warnings[2048];
	tt_status st = load_theme(o, &theme, warnings, sizeof warnings, err);
	/* The pipe that signals wake the loop through; the handlers are
	 * installed once the screen's state can take them. */
	if (st == TT_OK)
		st = session_catch_signals(NULL, 0, err);
	/* The tasks view's reader, started by the session with the others. */
	struct session_options so = o->session;
	so.tasks_every_ns = TASKWATCH_INTERVAL_NS;
	so.frame_inspector = true;
	struct session s;
	if (st == TT_OK)
		st = session_start(&s, &so, err);
	if (st != TT_OK)
		return st;

	struct ui u;
	ui_setup(&u, o, &s);
	if (!u.table) {
		ui_release(&u);
		session_end(&s);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory setting up the live view");
	}

	/* termkey before initscr (it would otherwise set up terminfo again);
	 * with NOTERMIOS, ncurses alone owns the terminal modes. */
	TermKey *tk = termkey_new(STDIN_FILENO, TERMKEY_FLAG_NOTERMIOS | TERMKEY_FLAG_CTRLC);
	if (!tk) {
		ui_release(&u);
		session_end(&s);
		return tt_fail(err, TT_EIO, errno, "cannot set up keyboard input (libtermkey)");
	}
	if (tcgetattr(STDIN_FILENO, &saved_termios) == 0)
		have_saved_termios = true;
	FILE *err_tmp = NULL;
	int saved_stderr = stderr_to_file(&err_tmp);
	install_signals();
	SCREEN *screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		stderr_restore(saved_stderr, err_tmp);
		termkey_destroy(tk);
		ui_release(&u);
		session_end(&s);
		return tt_fail(err, TT_EUSAGE, 0, "cannot drive terminal type '%s'",
			       getenv("TERM") ? getenv("TERM") : "(unset)");
	}
	screen_up = 1;
	raw();
	noecho();
	nonl();
	curs_set(0);
	typeahead(-1);
	theme_apply(&theme, o->monochrome);
	/* The theme's default colours fill the whole screen, not just text. */
	bkgd(' ' | (chtype)theme_attr(ROLE_DEFAULT));
	getmaxyx(stdscr, u.rows, u.cols);
	u.dirty = true;

	while (!u.quit) {
		advance(&u);
		if (!wait_for_keys(&u, tk))
			break;
	}

	endwin();
	delscreen(screen);
	screen_up = 0;
	termkey_destroy(tk);
	if (have_saved_termios)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
	stderr_restore(saved_stderr, err_tmp);
	char final_text[sizeof u.finished_text] = "";
	if (u.finished)
		snprintf(final_text, sizeof final_text, "%s", u.finished_text);
	ui_release(&u);
	session_end(&s);
	if (final_text[0])
		fprintf(stderr, "tachyon-top: %s\n", final_text);
	if (warnings[0])
		fprintf(stderr, "%s%s", warnings, warnings[strlen(warnings) - 1] == '\n' ? "" : "\n");
	return TT_OK;
}
