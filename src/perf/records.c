/* records.c - perf record decoding: see records.h.  Every read is bounds
 * checked against the record's own size: the ring is written by the kernel,
 * but a torn or corrupt record must not take vigil down. */
#include "perf/records.h"

#include <string.h>

struct cursor {
	const unsigned char *p, *end;
	bool ok;
};

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->ok = false;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static const void *take_bytes(struct cursor *c, uint64_t n)
{
	const void *p = c->p;

	if ((uint64_t)(c->end - c->p) < n) {
		c->ok = false;
		c->p = c->end;
		return NULL;
	}
	c->p += n;
	return p;
}

bool vg_perf_record_identifier(const struct perf_event_header *h, uint64_t *id)
{
	const unsigned char *body = (const unsigned char *)(h + 1);

	if (h->size < sizeof(*h) + 8)
		return false;
	if (h->type == PERF_RECORD_SAMPLE)
		memcpy(id, body, 8);
	else
		memcpy(id, (const unsigned char *)h + h->size - 8, 8);
	return true;
}

/* One u64 per bit of mask, in bit order (perf_output_sample_regs); the
 * set bits are walked, not all 64 (this runs for every sample). */
static void take_regs(struct cursor *c, uint64_t mask, struct vg_regs *out)
{
	for (uint64_t m = mask; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctzll(m);
		uint64_t v = take_u64(c);

		if (i < VG_NREGS) {
			out->regs[i] = v;
			out->mask |= 1ull << i;
		}
	}
}

bool vg_perf_parse_sample(const struct perf_event_header *h,
			  const struct vg_perf_format *fmt, struct vg_perf_sample *s)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size, true };
	uint64_t t = fmt->sample_type;

	memset(s, 0, sizeof(*s));
	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h))
		return false;
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->identifier = take_u64(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = take_u64(&c);
	if (t & PERF_SAMPLE_TID) {
		uint64_t v = take_u64(&c);

		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = take_u64(&c);
	if (t & PERF_SAMPLE_ADDR)
		s->addr = take_u64(&c);
	if (t & PERF_SAMPLE_ID)
		s->identifier = take_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		(void)take_u64(&c);
	if (t & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)take_u64(&c);
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take_u64(&c);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->nr_callchain = take_u64(&c);
		if (s->nr_callchain > (uint64_t)(c.end - c.p) / 8)
			return false;
		s->callchain = take_bytes(&c, s->nr_callchain * 8);
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = take_u64(&c);
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE)
			take_regs(&c, fmt->regs_user_mask, &s->regs);
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take_u64(&c);

		if (size) {
			const uint8_t *data = take_bytes(&c, size);
			uint64_t dyn = take_u64(&c);

			s->stack = data;
			s->stack_size = dyn < size ? dyn : size;
		}
	}
	/* WEIGHT, DATA_SRC and TRANSACTION would come here: not supported. */
	if (t & PERF_SAMPLE_REGS_INTR) {
		if (take_u64(&c) != PERF_SAMPLE_REGS_ABI_NONE)
			take_regs(&c, fmt->regs_intr_mask, &s->intr);
	}
	return c.ok;
}

bool vg_perf_parse_task(const struct perf_event_header *h, struct vg_perf_task *out)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size, true };
	uint64_t a, b;

	if (h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT)
		return false;
	a = take_u64(&c);
	b = take_u64(&c);
	out->pid = (uint32_t)a;
	out->ppid = (uint32_t)(a >> 32);
	out->tid = (uint32_t)b;
	out->ptid = (uint32_t)(b >> 32);
	out->time = take_u64(&c);
	return c.ok;
}

/* A NUL-terminated string that starts at c and ends inside the record. */
static const char *take_string(struct cursor *c)
{
	const char *s = (const char *)c->p;
	const void *nul = c->ok && c->p < c->end ? memchr(c->p, '\0', (size_t)(c->end - c->p)) : NULL;

	if (!nul) {
		c->ok = false;
		return NULL;
	}
	return s;
}

bool vg_perf_parse_mmap2(const struct perf_event_header *h, struct vg_perf_mmap *out)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size, true };
	uint64_t a;

	if (h->type != PERF_RECORD_MMAP2)
		return false;
	a = take_u64(&c);
	out->pid = (uint32_t)a;
	out->tid = (uint32_t)(a >> 32);
	out->addr = take_u64(&c);
	out->len = take_u64(&c);
	out->pgoff = take_u64(&c);
	/* maj, min, ino, ino_generation (or build-id): 24 bytes. */
	(void)take_u64(&c);
	(void)take_u64(&c);
	(void)take_u64(&c);
	a = take_u64(&c);
	out->prot = (uint32_t)a;
	out->flags = (uint32_t)(a >> 32);
	out->filename = take_string(&c);
	return c.ok;
}

bool vg_perf_parse_comm(const struct perf_event_header *h, struct vg_perf_comm *out)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size, true };
	uint64_t a;

	if (h->type != PERF_RECORD_COMM)
		return false;
	a = take_u64(&c);
	out->pid = (uint32_t)a;
	out->tid = (uint32_t)(a >> 32);
	out->comm = take_string(&c);
	out->exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
	return c.ok;
}

bool vg_perf_parse_lost(const struct perf_event_header *h, uint64_t *lost)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size, true };

	if (h->type != PERF_RECORD_LOST)
		return false;
	(void)take_u64(&c);   /* id */
	*lost = take_u64(&c);
	return c.ok;
}

bool vg_perf_parse_throttle(const struct perf_event_header *h, uint64_t *time)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size, true };

	if (h->type != PERF_RECORD_THROTTLE && h->type != PERF_RECORD_UNTHROTTLE)
		return false;
	*time = take_u64(&c);
	return c.ok;
}
