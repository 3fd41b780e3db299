/*
 * wsload: the WebSocket load generator and echo server of Tools/bench/proxy.
 *
 * Plain C on epoll, one thread each, so that the tools measuring the proxy are much
 * faster than the proxy they measure (Python would be the bottleneck). Built by the
 * bench script with `cc -O2 wsload.c -lcrypto`.
 *
 *   wsload echo PORT
 *       WebSocket echo server on 127.0.0.1:PORT: answers upgrades, sends every data
 *       frame back unmasked, answers pings, echoes closes. Prints "listening" when ready.
 *   wsload load PORT CONNS SECONDS SIZE WINDOW
 *       CONNS connections to 127.0.0.1:PORT, each keeping WINDOW binary messages of SIZE
 *       bytes in flight (masked, as a client must), for SECONDS after all are connected.
 *       Prints one line: messages msgs_per_s MB_per_s p50_us p99_us (round trips).
 *   wsload rate PORT CONNS SECONDS SIZE RATE
 *       Open loop (wrk2-style): RATE messages per second in total, spread evenly over the
 *       CONNS connections on a fixed schedule (message j at start + j / RATE, on
 *       connection j % CONNS), sent whether or not earlier replies came back. Each message
 *       carries its SCHEDULED send time, so a stall anywhere (proxy, echo, or the load
 *       generator itself) counts against every message it delays: coordinated omission
 *       cannot hide it. Waits up to 2 s for the last replies. Prints one line:
 *       messages msgs_per_s MB_per_s p50_us p99_us p999_us max_us lost.
 *   wsload bird-echo PORT
 *       `echo` playing a Bird server: after the 101 it sends bird:connection_established
 *       (a socket id of its own per connection), answers each bird:subscribe with
 *       bird_internal:subscription_succeeded for its channel, and echoes everything else.
 *   wsload bird-rate PORT CONNS SECONDS RATE
 *       The open loop of `rate` with the text messages of `bird` (Bird JSON envelopes of
 *       200 B to 2 KiB, the scheduled send time in their "t" member), as a well-behaved
 *       Bird client against `bird-echo`: each connection waits for the handshake,
 *       subscribes to the BIRD_CHANNELS private channels the messages are sent on, and
 *       the clock starts once every connection has all its subscriptions. Prints as `rate`.
 *   wsload idle PORT CONNS SECONDS
 *       Opens CONNS WebSocket connections, holds them idle for SECONDS, prints
 *       "connected N" once all upgrades are answered and "done" at the end.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    int upgraded;
    unsigned char *in;
    size_t inlen, incap;
    unsigned char *out;
    size_t outlen, outcap, outoff;
    int inflight;
    int joined;  /* bird-rate: the handshake and subscription answers received */
} conn_t;

static int ep;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what) { perror(what); exit(1); }

static void reserve(unsigned char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return;
    size_t n = *cap ? *cap : 16384;
    while (n < need) n *= 2;
    *buf = realloc(*buf, n);
    if (!*buf) die("realloc");
    *cap = n;
}

static void set_events(conn_t *c, int want_out) {
    struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Writes what it can now; keeps the rest and asks for EPOLLOUT. */
static int flush_out(conn_t *c) {
    while (c->outoff < c->outlen) {
        ssize_t n = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);
        if (n < 0) {
            if (errno == EAGAIN) { set_events(c, 1); return 0; }
            if (errno == EINTR) continue;
            return -1;
        }
        c->outoff += n;
    }
    c->outlen = c->outoff = 0;
    set_events(c, 0);
    return 0;
}

static void queue(conn_t *c, const void *data, size_t len) {
    reserve(&c->out, &c->outcap, c->outlen + len);
    memcpy(c->out + c->outlen, data, len);
    c->outlen += len;
}

static size_t frame_header(unsigned char *h, int opcode, uint64_t len, int masked) {
    size_t n = 0;
    h[n++] = 0x80 | opcode;
    unsigned char m = masked ? 0x80 : 0;
    if (len < 126) h[n++] = m | len;
    else if (len < 65536) { h[n++] = m | 126; h[n++] = len >> 8; h[n++] = len; }
    else { h[n++] = m | 127; for (int i = 7; i >= 0; i--) h[n++] = len >> (8 * i); }
    if (masked) { memset(h + n, 0, 4); n += 4; }  /* key 0: valid, and XOR costs nothing */
    return n;
}

/* Parses one frame at `p` (len bytes). Returns its total size, 0 if incomplete. */
static size_t parse_frame(unsigned char *p, size_t len, int *opcode, unsigned char **payload, uint64_t *plen) {
    if (len < 2) return 0;
    size_t n = 2;
    uint64_t l = p[1] & 0x7f;
    int masked = p[1] & 0x80;
    if (l == 126) { if (len < 4) return 0; l = (p[2] << 8) | p[3]; n = 4; }
    else if (l == 127) { if (len < 10) return 0; l = 0; for (int i = 0; i < 8; i++) l = (l << 8) | p[2 + i]; n = 10; }
    unsigned char key[4] = {0};
    if (masked) { if (len < n + 4) return 0; memcpy(key, p + n, 4); n += 4; }
    if (len < n + l) return 0;
    if (masked && (key[0] | key[1] | key[2] | key[3]))
        for (uint64_t i = 0; i < l; i++) p[n + i] ^= key[i & 3];
    *opcode = p[0] & 0x0f;
    *payload = p + n;
    *plen = l;
    return n + l;
}

static conn_t *add_conn(int fd) {
    conn_t *c = calloc(1, sizeof *c);
    c->fd = fd;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    return c;
}

static void drop_conn(conn_t *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

/* Reads everything available into c->in. Returns -1 on EOF or error. */
static int fill(conn_t *c) {
    for (;;) {
        reserve(&c->in, &c->incap, c->inlen + 65536);
        ssize_t n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
        if (n > 0) { c->inlen += n; continue; }
        if (n == 0) return -1;
        if (errno == EAGAIN) return 0;
        if (errno == EINTR) continue;
        return -1;
    }
}

static void consume(conn_t *c, size_t n) {
    memmove(c->in, c->in + n, c->inlen - n);
    c->inlen -= n;
}

static int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) die("bind");
    if (listen(fd, 4096) < 0) die("listen");
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* ---- echo server ---- */

static void accept_key(const char *key, size_t keylen, char *out) {
    unsigned char buf[128], digest[20];
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    memcpy(buf, key, keylen);
    memcpy(buf + keylen, guid, sizeof guid - 1);
    SHA1(buf, keylen + sizeof guid - 1, digest);
    EVP_EncodeBlock((unsigned char *)out, digest, 20);
}

/* bird-echo: play the Bird server's side of the handshake and subscriptions. */
static int bird_echo;
static unsigned bird_sockets;

static void queue_text(conn_t *c, const char *text, int masked) {
    unsigned char h[14];
    size_t n = strlen(text);
    queue(c, h, frame_header(h, 1, n, masked));
    queue(c, text, n);
}

/* Answers a bird:subscribe frame; returns 0 for any other frame (to be echoed). */
static int bird_answer(conn_t *c, const unsigned char *payload, uint64_t plen) {
    static const char key[] = "\"channel\":\"";
    if (!memmem(payload, plen, "\"bird:subscribe\"", 16)) return 0;
    const unsigned char *name = memmem(payload, plen, key, sizeof key - 1);
    if (!name) return 0;
    name += sizeof key - 1;
    const unsigned char *end = memchr(name, '"', payload + plen - name);
    if (!end || end - name > 200) return 0;
    char reply[512];
    snprintf(reply, sizeof reply, "{\"event\":\"bird_internal:subscription_succeeded\",\"channel\":\"%.*s\",\"data\":\"{}\"}",
             (int)(end - name), name);
    queue_text(c, reply, 0);
    return 1;
}

static int echo_input(conn_t *c) {
    if (!c->upgraded) {
        unsigned char *end = memmem(c->in, c->inlen, "\r\n\r\n", 4);
        if (!end) return c->inlen > 16384 ? -1 : 0;
        unsigned char *k = memmem(c->in, end - c->in, "Sec-WebSocket-Key:", 18);
        if (!k) k = memmem(c->in, end - c->in, "sec-websocket-key:", 18);
        if (!k) return -1;
        k += 18;
        while (*k == ' ') k++;
        unsigned char *e = k;
        while (*e != '\r' && e - k < 64) e++;
        char accept[64], resp[256];
        accept_key((char *)k, e - k, accept);
        int n = snprintf(resp, sizeof resp, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                         "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", accept);
        queue(c, resp, n);
        consume(c, end + 4 - c->in);
        c->upgraded = 1;
        if (bird_echo) {
            char hello[256];
            bird_sockets++;
            snprintf(hello, sizeof hello, "{\"event\":\"bird:connection_established\",\"data\":"
                     "\"{\\\"socket_id\\\":\\\"%u.%u\\\",\\\"activity_timeout\\\":120}\"}", 1000 + bird_sockets, 7 * bird_sockets);
            queue_text(c, hello, 0);
        }
    }
    size_t off = 0;
    for (;;) {
        int opcode; unsigned char *payload; uint64_t plen;
        size_t n = parse_frame(c->in + off, c->inlen - off, &opcode, &payload, &plen);
        if (!n) break;
        unsigned char h[14];
        int reply = opcode == 9 ? 10 : opcode;
        if (bird_echo && opcode == 1 && bird_answer(c, payload, plen)) {
            /* answered */
        } else if (opcode != 10) {
            queue(c, h, frame_header(h, reply, plen, 0));
            queue(c, payload, plen);
        }
        off += n;
        if (opcode == 8) { consume(c, off); flush_out(c); return -1; }
    }
    consume(c, off);
    return flush_out(c);
}

static int run_echo(int port) {
    int lfd = listen_on(port);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    printf("listening\n");
    fflush(stdout);
    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        for (int i = 0; i < n; i++) {
            conn_t *c = events[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept(lfd, NULL, NULL)) >= 0) add_conn(fd);
                continue;
            }
            if (events[i].events & EPOLLOUT) { if (flush_out(c) < 0) { drop_conn(c); continue; } }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                int eof = fill(c);
                if (echo_input(c) < 0 || eof < 0) drop_conn(c);
            }
        }
    }
    return 0;
}

/* ---- load generator ---- */

static unsigned char *message;  /* one complete masked frame; bytes 0..7 of payload: send time */
static size_t message_len, message_header;
static uint64_t total_msgs, total_bytes;
static uint32_t *histogram;  /* round trip in microseconds, last bucket = overflow */
#define HMAX 1000000

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) die("connect");
    return fd;
}

static void send_upgrade(conn_t *c, int port) {
    char req[512];
    int n = snprintf(req, sizeof req, "GET /app/bench?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", port);
    queue(c, req, n);
    flush_out(c);
}

/* bird mode: text frames holding Bird JSON envelopes of 200 B to 2 KiB, BIRD_VARIANTS of
   them sent in turn; the send time is 16 hex digits at payload offset 6 ({"t":"..."). */
#define BIRD_VARIANTS 97
#define BIRD_CHANNELS 13  /* private-room-0 .. -12; variant k is sent on k % BIRD_CHANNELS */
static int bird;
static unsigned char *bird_msg[BIRD_VARIANTS];
static size_t bird_len[BIRD_VARIANTS], bird_header[BIRD_VARIANTS];
static uint64_t bird_next;

static void make_bird_messages(void) {
    static const char *words[] = {"the", "meeting", "moved", "to", "tomorrow", "at", "ten", "please", "bring",
        "slides", "and", "coffee", "ok", "see", "you", "there", "thanks", "great", "news", "launch", "build",
        "passed", "deploy", "staging", "review", "comment", "ticket", "customer", "asked", "about", "invoice"};
    uint64_t seed = 1;
    for (int k = 0; k < BIRD_VARIANTS; k++) {
        size_t target = 200 + (size_t)k * (2048 - 200) / (BIRD_VARIANTS - 1);
        char *text = malloc(4096), *payload = malloc(4096);
        size_t tl = 0;
        while (tl + 40 < target) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            tl += sprintf(text + tl, "%s ", words[(seed >> 33) % (sizeof words / sizeof *words)]);
        }
        int n = snprintf(payload, 4096, "{\"t\":\"%016llx\",\"event\":\"client-message\",\"channel\":\"private-room-%d\","
                         "\"data\":\"{\\\"id\\\":%d,\\\"user\\\":\\\"user-%d\\\",\\\"text\\\":\\\"%.*s\\\"}\"}",
                         0ull, k % BIRD_CHANNELS, 100000 + k * 7, k % 29, (int)(target > 190 ? target - 190 : 10), text);
        bird_msg[k] = malloc(n + 14);
        bird_header[k] = frame_header(bird_msg[k], 1, n, 1);
        memcpy(bird_msg[k] + bird_header[k], payload, n);
        bird_len[k] = bird_header[k] + n;
        free(text); free(payload);
    }
}

/* Queues the next Bird envelope, stamped with send time t. */
static void queue_bird(conn_t *c, uint64_t t) {
    int k = bird_next++ % BIRD_VARIANTS;
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)t);
    memcpy(bird_msg[k] + bird_header[k] + 6, hex, 16);
    queue(c, bird_msg[k], bird_len[k]);
}

static void send_message(conn_t *c) {
    uint64_t t = now_ns();
    if (bird) {
        queue_bird(c, t);
    } else {
        memcpy(message + message_header, &t, 8);
        queue(c, message, message_len);
    }
    c->inflight++;
}

/* bird-rate: reads the handshake and subscription answers of an upgraded connection,
   subscribing once the handshake is in. Returns 1 when the connection has just got all of
   them (the frames after are left for the load). */
static int bird_session;
static unsigned bird_auths;

static int bird_join(conn_t *c) {
    size_t off = 0;
    int done = 0;
    while (c->joined <= BIRD_CHANNELS) {
        int opcode; unsigned char *payload; uint64_t plen;
        size_t m = parse_frame(c->in + off, c->inlen - off, &opcode, &payload, &plen);
        if (!m) break;
        off += m;
        if (opcode != 1) continue;
        if (memmem(payload, plen, "connection_established", 22)) {
            for (int k = 0; k < BIRD_CHANNELS; k++) {
                char sub[256];
                snprintf(sub, sizeof sub, "{\"event\":\"bird:subscribe\",\"data\":{\"channel\":\"private-room-%d\","
                         "\"auth\":\"bench:%08x\"}}", k, ++bird_auths);
                queue_text(c, sub, 1);
            }
            c->joined++;
        } else if (memmem(payload, plen, "subscription_succeeded", 22)) {
            c->joined++;
        }
        if (c->joined == BIRD_CHANNELS + 1) done = 1;
    }
    consume(c, off);
    flush_out(c);
    return done;
}

/* Returns 1 when the upgrade response has been read. */
static int read_upgrade(conn_t *c) {
    unsigned char *end = memmem(c->in, c->inlen, "\r\n\r\n", 4);
    if (!end) return 0;
    if (c->inlen < 12 || memcmp(c->in + 9, "101", 3) != 0) { fprintf(stderr, "wsload: upgrade refused: %.*s\n", (int)(c->inlen < 200 ? c->inlen : 200), c->in); exit(1); }
    consume(c, end + 4 - c->in);
    c->upgraded = 1;
    return 1;
}

static uint64_t sent_msgs;

/* Sends every message whose scheduled time has come (open loop). Returns the next one's time. */
static uint64_t send_due(conn_t **all, int conns, uint64_t start, double rate, uint64_t deadline) {
    uint64_t now = now_ns();
    for (;;) {
        uint64_t due = start + (uint64_t)(sent_msgs * 1e9 / rate);
        if (due >= deadline) return deadline;
        if (due > now) return due;
        conn_t *c = all[sent_msgs % conns];
        /* The scheduled time, not the actual one. */
        if (bird) {
            queue_bird(c, due);
        } else {
            memcpy(message + message_header, &due, 8);
            queue(c, message, message_len);
        }
        c->inflight++;
        flush_out(c);
        sent_msgs++;
    }
}

static int run_load(int port, int conns, double seconds, size_t size, int window, int idle, double rate) {
    if (size < 8) size = 8;
    message = malloc(size + 14);
    message_header = frame_header(message, 2, size, 1);
    memset(message + message_header, 'x', size);
    message_len = message_header + size;
    histogram = calloc(HMAX + 1, sizeof *histogram);
    conn_t **all = calloc(conns, sizeof *all);
    int upgraded = 0, opened = 0, running = 0, ready = 0;
    uint64_t start = 0, deadline = 0;
    struct epoll_event events[512];
    /* Open connections in batches so the listen backlog never overflows. */
    while (opened < conns && opened - upgraded < 256) {
        all[opened] = add_conn(connect_to(port));
        send_upgrade(all[opened], port);
        opened++;
    }
    uint64_t next_send = 0;
    for (;;) {
        struct timespec timeout = {.tv_sec = 1};
        if (running) {
            uint64_t now = now_ns();
            if (rate > 0) {
                /* Open loop: sending stops at the deadline; replies are awaited 2 s more. */
                if (now < deadline) next_send = send_due(all, conns, start, rate, deadline);
                uint64_t until = now < deadline ? next_send : deadline + 2000000000ull;
                if (now >= until || (now >= deadline && total_msgs == sent_msgs)) break;
                timeout.tv_sec = (until - now) / 1000000000ull;
                timeout.tv_nsec = (until - now) % 1000000000ull;
            } else {
                if (now >= deadline) break;
                timeout.tv_sec = (deadline - now) / 1000000000ull;
                timeout.tv_nsec = (deadline - now) % 1000000000ull;
            }
        }
        int n = epoll_pwait2(ep, events, 512, &timeout, NULL);
        for (int i = 0; i < n; i++) {
            conn_t *c = events[i].data.ptr;
            if (events[i].events & EPOLLOUT) flush_out(c);
            if (!(events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            int eof = fill(c);
            if (!c->upgraded) {
                if (read_upgrade(c)) {
                    upgraded++;
                    while (opened < conns && opened - upgraded < 256) {
                        all[opened] = add_conn(connect_to(port));
                        send_upgrade(all[opened], port);
                        opened++;
                    }
                    if (!bird_session) ready++;
                }
            }
            if (c->upgraded && !running && bird_session && c->joined <= BIRD_CHANNELS) ready += bird_join(c);
            if (!running && ready == conns) {
                if (idle) { printf("connected %d\n", upgraded); fflush(stdout); }
                start = now_ns();
                deadline = start + (uint64_t)(seconds * 1e9);
                running = 1;
                if (!idle && rate == 0)
                    for (int k = 0; k < conns; k++) {
                        for (int w = 0; w < window; w++) send_message(all[k]);
                        flush_out(all[k]);
                    }
            }
            if (c->upgraded && running && !idle) {
                size_t off = 0;
                uint64_t now = now_ns();
                for (;;) {
                    int opcode; unsigned char *payload; uint64_t plen;
                    size_t m = parse_frame(c->in + off, c->inlen - off, &opcode, &payload, &plen);
                    if (!m) break;
                    off += m;
                    uint64_t sent;
                    if (bird) {
                        if (opcode != 1 || plen < 22 || memcmp(payload, "{\"t\":\"", 6)) continue;
                        char hex[17];
                        memcpy(hex, payload + 6, 16);
                        hex[16] = 0;
                        sent = strtoull(hex, NULL, 16);
                    } else {
                        if (opcode != 2 || plen < 8) continue;
                        memcpy(&sent, payload, 8);
                    }
                    uint64_t us = (now - sent) / 1000;
                    histogram[us > HMAX ? HMAX : us]++;
                    total_msgs++;
                    total_bytes += plen;
                    c->inflight--;
                    if (rate == 0) send_message(c);
                }
                consume(c, off);
                flush_out(c);
            }
            if (eof < 0) { fprintf(stderr, "wsload: connection closed by peer\n"); exit(1); }
        }
    }
    double elapsed = rate > 0 ? seconds : (now_ns() - start) / 1e9;
    if (idle) { printf("done\n"); return 0; }
    uint64_t seen = 0, p50 = 0, p99 = 0, p999 = 0, max = 0;
    int got50 = 0, got99 = 0, got999 = 0;
    for (uint64_t us = 0; us <= HMAX; us++) {
        seen += histogram[us];
        if (histogram[us]) max = us;
        if (!got50 && seen * 2 >= total_msgs) { p50 = us; got50 = 1; }
        if (!got99 && seen * 100 >= total_msgs * 99) { p99 = us; got99 = 1; }
        if (!got999 && seen * 1000 >= total_msgs * 999) { p999 = us; got999 = 1; }
    }
    if (rate > 0)
        printf("%llu %.0f %.2f %llu %llu %llu %llu %llu\n", (unsigned long long)total_msgs, total_msgs / elapsed,
               total_bytes / elapsed / 1048576.0, (unsigned long long)p50, (unsigned long long)p99,
               (unsigned long long)p999, (unsigned long long)max, (unsigned long long)(sent_msgs - total_msgs));
    else
        printf("%llu %.0f %.2f %llu %llu\n", (unsigned long long)total_msgs, total_msgs / elapsed,
               total_bytes / elapsed / 1048576.0, (unsigned long long)p50, (unsigned long long)p99);
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);  /* a peer that went away is an error to handle, not a kill */
    ep = epoll_create1(0);
    if (argc >= 3 && !strcmp(argv[1], "echo")) return run_echo(atoi(argv[2]));
    if (argc >= 7 && !strcmp(argv[1], "load"))
        return run_load(atoi(argv[2]), atoi(argv[3]), atof(argv[4]), strtoul(argv[5], 0, 10), atoi(argv[6]), 0, 0);
    if (argc >= 7 && !strcmp(argv[1], "rate") && atof(argv[6]) > 0)
        return run_load(atoi(argv[2]), atoi(argv[3]), atof(argv[4]), strtoul(argv[5], 0, 10), 0, 0, atof(argv[6]));
    if (argc >= 6 && !strcmp(argv[1], "bird")) {
        bird = 1;
        make_bird_messages();
        return run_load(atoi(argv[2]), atoi(argv[3]), atof(argv[4]), 8, atoi(argv[5]), 0, 0);
    }
    if (argc >= 3 && !strcmp(argv[1], "bird-echo")) {
        bird_echo = 1;
        return run_echo(atoi(argv[2]));
    }
    if (argc >= 6 && !strcmp(argv[1], "bird-rate") && atof(argv[5]) > 0) {
        bird = bird_session = 1;
        make_bird_messages();
        return run_load(atoi(argv[2]), atoi(argv[3]), atof(argv[4]), 8, 0, 0, atof(argv[5]));
    }
    if (argc >= 5 && !strcmp(argv[1], "idle")) return run_load(atoi(argv[2]), atoi(argv[3]), atof(argv[4]), 8, 0, 1, 0);
    fprintf(stderr, "usage: wsload echo PORT | bird-echo PORT | load PORT CONNS SECONDS SIZE WINDOW | rate PORT CONNS SECONDS SIZE RATE"
                    " | idle PORT CONNS SECONDS | bird PORT CONNS SECONDS WINDOW | bird-rate PORT CONNS SECONDS RATE\n");
    return 2;
}
