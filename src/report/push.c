/* push.c - a profile to a Pyroscope-compatible ingest endpoint (push.h). */
#include "report/push.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "util/dynlib.h"

/* A push waits at most this long: it runs between two drains of the
 * sampling rings, which hold several seconds at continuous mode's rate. */
#define PUSH_TIMEOUT_S 5L
#define PUSH_CONNECT_TIMEOUT_S 3L

/* libcurl's functions, typed by its header, found by dlsym.  Called
 * through these pointers, not by name: curl.h wraps curl_easy_setopt in a
 * type-checking macro. */
static struct {
	bool initialized;      /* curl_global_init done */
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} curl;

/* The OpenSSL flavour first (libcurl4), then GnuTLS (libcurl3-gnutls):
 * the same API, either is enough. */
static const char *const curl_sonames[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };
static const struct vg_dynlib_fn curl_fns[] = {
	{ "curl_global_init", (void **)&curl.global_init },
	{ "curl_easy_init", (void **)&curl.easy_init },
	{ "curl_easy_setopt", (void **)&curl.easy_setopt },
	{ "curl_easy_perform", (void **)&curl.easy_perform },
	{ "curl_easy_getinfo", (void **)&curl.easy_getinfo },
	{ "curl_easy_cleanup", (void **)&curl.easy_cleanup },
	{ "curl_easy_strerror", (void **)&curl.easy_strerror },
	{ "curl_easy_escape", (void **)&curl.easy_escape },
	{ "curl_free", (void **)&curl.free },
	{ "curl_slist_append", (void **)&curl.slist_append },
	{ "curl_slist_free_all", (void **)&curl.slist_free_all },
};
static struct vg_dynlib curl_lib = VG_DYNLIB(curl_sonames, curl_fns);

static bool label_key_ok(const char *k, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)k[0]) || k[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)k[i]) || k[i] == '_' || k[i] == '.'))
			return false;
	return true;
}

int vg_push_check(const struct vg_push_opts *o, struct vg_error *err)
{
	if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
		return vg_error_set(err, -EINVAL, "invalid --push '%s': expected http://HOST:PORT or https://...",
				    o->url);
	if (!o->service[0] || strpbrk(o->service, "{},= \t\n"))
		return vg_error_set(err, -EINVAL, "invalid --service '%s': a name without spaces or {},=",
				    o->service);
	for (size_t i = 0; i < o->n_labels; i++) {
		const char *l = o->labels[i], *eq = strchr(l, '=');

		if (!eq || !label_key_ok(l, (size_t)(eq - l)) || !eq[1] || strpbrk(eq + 1, "{},=\n"))
			return vg_error_set(err, -EINVAL, "invalid --label '%s': expected KEY=VALUE, KEY of letters, digits, _ and ., VALUE without {},=",
					    l);
	}
	return 0;
}

/* The application name with its labels: SERVICE{k=v,k2=v2}. */
static char *app_name(const struct vg_push_opts *o)
{
	size_t n = strlen(o->service) + 3;
	char *s;

	for (size_t i = 0; i < o->n_labels; i++)
		n += strlen(o->labels[i]) + 1;
	s = malloc(n);
	if (!s)
		return NULL;
	strcpy(s, o->service);
	strcat(s, "{");
	for (size_t i = 0; i < o->n_labels; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, o->labels[i]);
	}
	strcat(s, "}");
	return s;
}

int vg_push_pprof(const struct vg_push_opts *o, const void *body, size_t len,
		  uint64_t from_s, uint64_t until_s, uint64_t hz, long *status,
		  struct vg_error *err)
{
	CURL *c;
	struct curl_slist *headers = NULL;
	char *name = NULL, *esc = NULL, *url = NULL, cerr[CURL_ERROR_SIZE] = "";
	size_t ulen = strlen(o->url);
	bool has_ingest = ulen >= 7 && strcmp(o->url + ulen - 7, "/ingest") == 0;
	const char *why;
	CURLcode cr;
	int r = 0;

	*status = 0;
	if (!vg_dynlib_get(&curl_lib, &why))
		return vg_error_set(err, -ENOSYS, "cannot push: %s (package libcurl4)", why);
	if (!curl.initialized) {
		if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return vg_error_set(err, -ENOSYS, "cannot push: libcurl's initialization failed");
		curl.initialized = true;
	}
	c = curl.easy_init();
	if (!c)
		return vg_error_set(err, -ENOMEM, "cannot push: out of memory for the HTTP request");
	name = app_name(o);
	esc = name ? curl.easy_escape(c, name, 0) : NULL;
	if (esc && asprintf(&url, "%s%s?name=%s&from=%" PRIu64 "&until=%" PRIu64
			    "&format=pprof&spyName=vigil&sampleRate=%" PRIu64,
			    o->url, has_ingest ? "" : ulen && o->url[ulen - 1] == '/' ? "ingest" : "/ingest",
			    esc, from_s, until_s, hz) < 0)
		url = NULL;
	headers = curl.slist_append(NULL, "Content-Type: application/octet-stream");
	if (!url || !headers) {
		r = vg_error_set(err, -ENOMEM, "cannot push: out of memory for the HTTP request");
		goto out;
	}
	curl.easy_setopt(c, CURLOPT_URL, url);
	curl.easy_setopt(c, CURLOPT_POST, 1L);
	curl.easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl.easy_setopt(c, CURLOPT_USERAGENT, "vigil/" VG_VERSION);
	curl.easy_setopt(c, CURLOPT_TIMEOUT, PUSH_TIMEOUT_S);
	curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, PUSH_CONNECT_TIMEOUT_S);
	/* vigil's own signal handling (signalfd) must not see SIGALRM. */
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	cr = curl.easy_perform(c);
	if (cr != CURLE_OK) {
		r = vg_error_set(err, -EIO, "push to %s failed: %s", o->url,
				 cerr[0] ? cerr : curl.easy_strerror(cr));
		goto out;
	}
	curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (*status < 200 || *status > 299)
		r = vg_error_set(err, -EIO, "push to %s failed: HTTP status %ld", o->url, *status);
out:
	curl.slist_free_all(headers);
	free(url);
	if (esc)
		curl.free(esc);
	free(name);
	curl.easy_cleanup(c);
	return r;
}
