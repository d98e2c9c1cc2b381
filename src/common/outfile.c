#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

static void
outfile_release(struct outfile *o)
{
	free(o->name);
	free(o->dest);
	free(o->tmp);
	memset(o, 0, sizeof *o);
}

/* "dir/.name.tachyon-XXXXXX" next to `dest`, for mkstemp. */
static char *
temp_template(const char *dest)
{
	const char *slash = strrchr(dest, '/');
	size_t dirlen = slash ? (size_t)(slash - dest) + 1 : 0;
	const char *base = slash ? slash + 1 : dest;
	size_t n = dirlen + 1 + strlen(base) + sizeof ".tachyon-XXXXXX";
	char *t = malloc(n);
	if (t)
		snprintf(t, n, "%.*s.%s.tachyon-XXXXXX", (int)dirlen, dest, base);
	return t;
}

tt_status
outfile_open(struct outfile *o, const char *path, struct tt_error *err)
{
	memset(o, 0, sizeof *o);
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (!exists && errno != ENOENT)
		return tt_fail(err, TT_EIO, errno, "cannot write %s: %s", path, strerror(errno));
	if (exists && S_ISDIR(st.st_mode))
		return tt_fail(err, TT_EIO, EISDIR, "cannot write %s: %s", path, strerror(EISDIR));
	if (exists && access(path, W_OK) != 0)
		return tt_fail(err, TT_EIO, errno, "cannot write %s: %s", path, strerror(errno));
	o->name = strdup(path);
	if (!o->name)
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory");
	if (exists && !S_ISREG(st.st_mode)) {
		/* A device, FIFO or terminal: never replaced, never unlinked; the
		 * data waits in an anonymous file until commit. */
		o->in_place = true;
		o->dest = strdup(path);
		o->f = o->dest ? tmpfile() : NULL;
		if (!o->f) {
			int e = o->dest ? errno : ENOMEM;
			outfile_release(o);
			return tt_fail(err, TT_EIO, e, "cannot buffer output for %s: %s", path,
				       strerror(e));
		}
		return TT_OK;
	}
	/* A symlink to a file: replace the file, keep the link. */
	char resolved[PATH_MAX];
	o->dest = strdup(exists && realpath(path, resolved) ? resolved : path);
	o->tmp = o->dest ? temp_template(o->dest) : NULL;
	if (!o->tmp) {
		outfile_release(o);
		return tt_fail(err, TT_ENOMEM, ENOMEM, "out of memory");
	}
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int e = errno;
		outfile_release(o);
		return tt_fail(err, TT_EIO, e, "cannot write %s: %s", path, strerror(e));
	}
	/* The permissions fopen() would give: the old file's, else 0666 less
	 * the umask (mkstemp makes it 0600). */
	mode_t mode;
	if (exists) {
		mode = st.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	(void)fchmod(fd, mode);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		outfile_release(o);
		return tt_fail(err, TT_EIO, e, "cannot write %s: %s", path, strerror(e));
	}
	return TT_OK;
}

/* Copy the buffered data into a destination that is not a regular file. */
static int
copy_in_place(struct outfile *o)
{
	if (fflush(o->f) != 0 || ferror(o->f))
		return errno ? errno : EIO;
	rewind(o->f);
	int fd = open(o->dest, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno;
	char buf[65536];
	size_t n;
	int e = 0;
	while (!e && (n = fread(buf, 1, sizeof buf, o->f)) > 0) {
		for (size_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				e = w < 0 ? errno : EIO;
				break;
			}
			off += (size_t)w;
		}
	}
	if (!e && ferror(o->f))
		e = EIO;
	if (close(fd) != 0 && !e && errno != EINTR)
		e = errno;
	return e;
}

tt_status
outfile_commit(struct outfile *o, struct tt_error *err)
{
	int e = 0;
	if (o->in_place) {
		e = copy_in_place(o);
		fclose(o->f);
	} else {
		if (fflush(o->f) != 0 || ferror(o->f))
			e = errno ? errno : EIO;
		/* On disk before it replaces the old file: a crash right after
		 * the rename must not leave an empty profile. */
		if (!e && fsync(fileno(o->f)) != 0 && errno != EINVAL)
			e = errno;
		if (fclose(o->f) != 0 && !e)
			e = errno;
		if (!e && rename(o->tmp, o->dest) != 0)
			e = errno;
		if (e)
			unlink(o->tmp);
	}
	o->f = NULL;
	tt_status st = TT_OK;
	if (e)
		st = tt_fail(err, TT_EIO, e, "writing %s: %s", o->name, strerror(e));
	outfile_release(o);
	return st;
}

void
outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	outfile_release(o);
}
