// CFFmpeg's reader (cffm_media): open a file or stream, decode its video, seek. See
// include/CFFmpeg.h. Plain C over libavformat/libavcodec/libswscale 5.1.
#include "CFFmpeg.h"
#include "shared.h"
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>
#include <libavutil/time.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cffm_media {
    AVFormatContext *format;
    AVCodecContext *codec;
    int stream;
    double time_base;
    AVPacket *packet;
    AVFrame *frame;
    AVFrame *converted;  // I420, when the decoder's layout is not one FrameKit has
    struct SwsContext *sws;
    atomic_int interrupted;
    double timeout;
    int64_t deadline;  // av_gettime_relative() microseconds; 0: none
    int draining;      // the end was reached: the decoder is being flushed
    // The file ends before data its own index places (a cut or half-copied file): bytes on
    // disk, and the end of the indexed data. Reported when the frames there are all delivered.
    int64_t truncated_at, indexed_end;
    // Packets given to the decoder, frames it gave back, and decode errors reported: a
    // frame-threaded decoder (PNG, for one) can lose a failed frame's error when it is flushed,
    // so a file of one damaged image would end with no frame and no error at all.
    int64_t packets_sent, frames_out, errors_reported;
    // The bytes read between packets are bounded for a network input or one that cannot seek:
    // the bytes read when the last packet ended (0 while it is opened and probed), the most
    // the next may take (while opening: CFFM_PROBE_BYTE_LIMIT), and whether a read was
    // abandoned for going past it. Bytes read, not the position: a demuxer's seeks move the
    // position without reading (an MP4's index at its end), and an http response with a
    // length seeks (it is read as a file) yet may hold a frame that never ends.
    int64_t packet_mark, max_frame_bytes;
    // A network input: bounded even where it seeks (an http response with a length), its
    // opening and probing too, so an http file whose header and index pass CFFM_PROBE_BYTE_LIMIT
    // (an MKV with large attachments) is refused: such a file is read from disk.
    int bounded;
    atomic_int overlong;
    // The input the bound reads, set once avformat_open_input has succeeded and cleared before
    // it is closed: when an open fails, FFmpeg frees the AVIOContext and then closes the
    // connection, whose TLS shutdown asks the callback again (m->format->pb is freed by then).
    AVIOContext *bounded_pb;
    // An http(s) response with no length: a body without chunks ends when the server closes
    // the connection (HTTP/1.0's rule), which FFmpeg's http reports as EIO (as it does a
    // chunked body broken off: FFmpeg does not say which it read). `close_is_end`
    // (cffm_read_close_as_end, a live input's): read as the end, as a tcp:// close is.
    int close_delimited, close_is_end;
    // The bound was passed while probing: the probe took what it read as the stream's end, and
    // its parser handed on the unfinished frame as a packet, which is then a corrupt drop.
    int overlong_in_probe;
};

// Bytes a live stream may send while it is opened and probed, before any frame size is known:
// FFmpeg's probe stops at 5 MB of packets, but a frame that never ends is never a packet, and
// the probe read a 300 MB one whole. 32 MiB is that probe and a first frame up to a 1080p
// JPEG's worst case (libjpeg-turbo's bound, 6 bytes a pixel: 12 MB; a real 4K one is a few MB).
// A parser's buffer grows by copying, so the peak is about twice it.
#define CFFM_PROBE_BYTE_LIMIT ((int64_t)32 << 20)

// A frame of `pixels` pixels: JPEG's worst case (6 bytes a pixel) and 4 MiB of headers.
static int64_t frame_bytes(int64_t pixels) { return pixels * 6 + ((int64_t)4 << 20); }

int64_t cffm_frame_byte_limit(int32_t width, int32_t height) {
    return frame_bytes((int64_t)(width > 0 ? width : 1) * (height > 0 ? height : 1));
}

// Whether the file is shorter than the samples its index lists (MP4's sample tables, AVI's
// idx1, Matroska's cues): FFmpeg's demuxers then just reach the end early. Streams have no size.
static void check_truncation(cffm_media *m) {
    AVIOContext *pb = m->format->pb;
    if (!pb || (m->format->flags & AVFMT_FLAG_CUSTOM_IO) || !pb->seekable) return;
    int64_t size = avio_size(pb);
    if (size <= 0) return;
    int64_t end = 0;
    for (unsigned s = 0; s < m->format->nb_streams; s++) {
        AVStream *st = m->format->streams[s];
        int count = avformat_index_get_entries_count(st);
        for (int i = 0; i < count; i++) {
            const AVIndexEntry *e = avformat_index_get_entry(st, i);
            if (e && e->pos + e->size > end) end = e->pos + e->size;
        }
    }
    if (end > size) {
        m->truncated_at = size;
        m->indexed_end = end;
    }
}

static int interrupt_callback(void *opaque) {
    cffm_media *m = opaque;
    if (atomic_load(&m->interrupted) || atomic_load(&m->overlong)) return 1;
    // FFmpeg asks before each read (a protocol's, not a file's buffer): a stream whose frame
    // never ends (no JPEG end marker, a NAL unit that goes on) would otherwise grow a parser's
    // buffer without bound (2–3.5 GB seen; 377 MB of a 300 MB frame over http with a length).
    // A local file that can seek is not bounded here: its size is its bound.
    AVIOContext *pb = m->bounded_pb;
    if (pb && (m->bounded || !(pb->seekable & AVIO_SEEKABLE_NORMAL)) && pb->bytes_read - m->packet_mark > m->max_frame_bytes) {
        atomic_store(&m->overlong, 1);
        return 1;
    }
    return m->deadline != 0 && av_gettime_relative() > m->deadline;
}

// Whether an open failed on reaching the input (a retry may help: exit 75 for a stream) rather
// than on what it sent (a data error, 65): the errors FFmpeg's protocols return. A demuxer that
// cannot read the bytes returns what it likes (EINVAL; EBUSY for a Y4M header with no valid
// size), so it is the transport's errors that are listed, not the data's. INVALIDDATA is among
// them: it is also what the probe says of a connection closed before any byte came (a proxy
// whose backend is down), which a retry may mend; junk is told from nothing only by bytes
// FFmpeg does not count for a failed open.
static int is_transport_error(int error) {
    switch (error) {
    case AVERROR_EXIT: case AVERROR_EOF: case AVERROR_INVALIDDATA: case AVERROR_UNKNOWN: case AVERROR(EAGAIN):
    case AVERROR(EIO): case AVERROR(ENOMEM): case AVERROR(EMFILE): case AVERROR(ENFILE): case AVERROR(ENOBUFS):
    case AVERROR(EHOSTDOWN):
    case AVERROR(ETIMEDOUT): case AVERROR(ECONNREFUSED): case AVERROR(ECONNRESET): case AVERROR(ECONNABORTED):
    case AVERROR(EHOSTUNREACH): case AVERROR(ENETUNREACH): case AVERROR(ENETDOWN): case AVERROR(EPIPE):
    case AVERROR(ENOTCONN): case AVERROR(EADDRNOTAVAIL): case AVERROR(EADDRINUSE): case AVERROR(ENOENT):
    case AVERROR(EACCES): case AVERROR(EPERM): case AVERROR_HTTP_BAD_REQUEST: case AVERROR_HTTP_UNAUTHORIZED:
    case AVERROR_HTTP_FORBIDDEN: case AVERROR_HTTP_NOT_FOUND: case AVERROR_HTTP_OTHER_4XX: case AVERROR_HTTP_SERVER_ERROR:
        return 1;
    default: return 0;
    }
}

// Each blocking call gets the whole timeout anew.
static void arm(cffm_media *m) { m->deadline = m->timeout > 0 ? av_gettime_relative() + (int64_t)(m->timeout * 1e6) : 0; }

static int layout_of(int format, cffm_layout *layout) {
    switch (format) {
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P: *layout = CFFM_LAYOUT_I420; return 1;
    case AV_PIX_FMT_NV12: *layout = CFFM_LAYOUT_NV12; return 1;
    case AV_PIX_FMT_GRAY8: *layout = CFFM_LAYOUT_GRAY8; return 1;
    default: return 0;
    }
}

void cffm_close(cffm_media *m) {
    if (!m) return;
    m->bounded_pb = NULL;  // closing the input asks the callback too
    avcodec_free_context(&m->codec);
    if (m->format) avformat_close_input(&m->format);
    av_packet_free(&m->packet);
    av_frame_free(&m->frame);
    av_frame_free(&m->converted);
    sws_freeContext(m->sws);
    free(m);
}

void cffm_read_close_as_end(cffm_media *m) {
    if (m) m->close_is_end = 1;
}

void cffm_interrupt(cffm_media *m) {
    if (m) atomic_store(&m->interrupted, 1);
}

cffm_status cffm_open(const char *url, int32_t threads, double timeout_seconds,
                      int64_t max_pixels, cffm_media **out, cffm_info *info, char *message, size_t message_size) {
    cffm_internal_quiet();
    // No single allocation of FFmpeg's past what a frame of the largest picture allowed may
    // take (the probe's limit at least): where the byte bound below cannot see a stream's
    // bytes — RTSP, whose RTP connections FFmpeg reads itself — a frame that never ends grew
    // the H.264 parser's buffer without bound (711 MB for 300 MB sent); the parser's buffer
    // then fails to grow, the parser drops what it held and goes on. Process-wide: raised to
    // the largest budget any open has given, never lowered under a stream already running.
    if (max_pixels > 0) {
        static _Atomic int64_t largest = 0;
        int64_t most = frame_bytes(max_pixels);
        if (most < CFFM_PROBE_BYTE_LIMIT) most = CFFM_PROBE_BYTE_LIMIT;
        int64_t seen = atomic_load(&largest);
        while (most > seen && !atomic_compare_exchange_weak(&largest, &seen, most)) {}
        if (most > seen) av_max_alloc((size_t)most);
    }
    *out = NULL;
    memset(info, 0, sizeof *info);
    cffm_media *m = calloc(1, sizeof *m);
    if (!m) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    atomic_init(&m->interrupted, 0);
    atomic_init(&m->overlong, 0);
    m->max_frame_bytes = CFFM_PROBE_BYTE_LIMIT;
    m->timeout = timeout_seconds;
    m->bounded = strstr(url, "://") != NULL && strncmp(url, "file:", 5) != 0;
    m->format = avformat_alloc_context();
    m->packet = av_packet_alloc();
    m->frame = av_frame_alloc();
    if (!m->format || !m->packet || !m->frame) { cffm_internal_say("out of memory", message, message_size); cffm_close(m); return CFFM_ERROR; }
    m->format->interrupt_callback.callback = interrupt_callback;
    m->format->interrupt_callback.opaque = m;

    AVDictionary *options = NULL;
    // RTSP over TCP: UDP loses packets behind NAT and firewalls, and a lost packet is a torn frame.
    if (strncmp(url, "rtsp", 4) == 0) av_dict_set(&options, "rtsp_transport", "tcp", 0);
    arm(m);
    int error = avformat_open_input(&m->format, url, NULL, &options);  // frees the context on failure
    av_dict_free(&options);
    if (error < 0) {
        int overlong = atomic_load(&m->overlong);
        int rejected = !overlong && !is_transport_error(error);
        cffm_internal_describe(error,
                               overlong   ? "cannot open: the stream sent 32 MiB without completing a frame"
                               : rejected ? "cannot open: what it sent is not a video FrameKit reads; FFmpeg said"
                                          : "cannot open",
                               message, message_size);
        cffm_close(m);
        return overlong ? CFFM_OVERLONG : error == AVERROR_EXIT ? CFFM_INTERRUPTED : rejected ? CFFM_REJECTED : CFFM_ERROR;
    }
    m->bounded_pb = m->format->pb;  // NULL for RTSP: bounded by av_max_alloc only (above)
    m->close_delimited = (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) && m->format->pb
                         && avio_size(m->format->pb) < 0;
    arm(m);
    // Probing decodes a frame of each stream: with no limit, a forged PNG header claiming
    // 16000x16000 took 1 GB here before anything could refuse it.
    unsigned stream_count = m->format->nb_streams;
    AVDictionary **probe_options = max_pixels > 0 && stream_count > 0 ? calloc(stream_count, sizeof *probe_options) : NULL;
    for (unsigned i = 0; probe_options && i < stream_count; i++) av_dict_set_int(&probe_options[i], "max_pixels", max_pixels, 0);
    error = avformat_find_stream_info(m->format, probe_options);
    for (unsigned i = 0; probe_options && i < stream_count; i++) av_dict_free(&probe_options[i]);
    free(probe_options);
    // Abandoned for an endless frame but with the stream's parameters found (frames came
    // before it): those frames are delivered, then cffm_next reports CFFM_OVERLONG.
    if (error < 0 && atomic_load(&m->overlong)) {
        cffm_internal_say("the stream sent 32 MiB without completing a frame", message, message_size);
        cffm_close(m);
        return CFFM_OVERLONG;
    }
    m->overlong_in_probe = atomic_load(&m->overlong);
    if (error < 0) {
        cffm_internal_describe(error, "cannot read the stream's parameters", message, message_size);
        cffm_close(m);
        return is_transport_error(error) ? CFFM_ERROR : CFFM_REJECTED;
    }
    const AVCodec *decoder = NULL;
    int stream = av_find_best_stream(m->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (stream < 0 || !decoder) {
        cffm_internal_say(stream == AVERROR_DECODER_NOT_FOUND ? "no decoder for its video codec" : "no video stream in it", message, message_size);
        cffm_close(m);
        return CFFM_ERROR;
    }
    AVStream *video = m->format->streams[stream];
    if (max_pixels > 0 && (int64_t)video->codecpar->width * video->codecpar->height > max_pixels) {
        char reason[160];
        snprintf(reason, sizeof reason, "its video is %dx%d, over the pixel budget of %lld pixels", video->codecpar->width,
                 video->codecpar->height, (long long)max_pixels);
        cffm_internal_say(reason, message, message_size);
        cffm_close(m);
        return CFFM_REJECTED;
    }
    m->stream = stream;
    m->time_base = av_q2d(video->time_base);
    m->codec = avcodec_alloc_context3(decoder);
    if (!m->codec || avcodec_parameters_to_context(m->codec, video->codecpar) < 0) {
        cffm_internal_say("cannot set up the decoder", message, message_size);
        cffm_close(m);
        return CFFM_ERROR;
    }
    m->codec->thread_count = threads < 1 ? 1 : (threads > 16 ? 16 : threads);
    m->codec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    // A stream whose size changes mid-way (a parameter-set change) is held to the same limit.
    if (max_pixels > 0) m->codec->max_pixels = max_pixels;
    error = avcodec_open2(m->codec, decoder, NULL);
    if (error < 0) { cffm_internal_describe(error, "cannot open the decoder", message, message_size); cffm_close(m); return CFFM_ERROR; }
    if (m->codec->width <= 0 || m->codec->height <= 0) {
        // A probe refused for the budget leaves the size unknown too (FFmpeg says why only in
        // its log): both causes are named.
        char reason[160];
        snprintf(reason, sizeof reason, "the video stream has no size, or a picture over the pixel budget of %lld pixels",
                 (long long)max_pixels);
        cffm_internal_say(max_pixels > 0 ? reason : "the video stream has no size", message, message_size);
        cffm_close(m);
        return CFFM_ERROR;
    }

    // From here the bound is a frame's of this size, counted from the last packet.
    if (m->bounded_pb) m->packet_mark = m->bounded_pb->bytes_read;
    m->max_frame_bytes = cffm_frame_byte_limit(m->codec->width, m->codec->height);
    info->width = m->codec->width;
    info->height = m->codec->height;
    AVRational rate = av_guess_frame_rate(m->format, video, NULL);
    info->frame_rate = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0;
    info->duration = m->format->duration > 0 ? (double)m->format->duration / AV_TIME_BASE : 0;
    // A playlist's demuxer (HLS, DASH) reads its segments through connections of its own: the
    // size of what it was opened on is the playlist's, not the video's.
    const char *container = m->format->iformat ? m->format->iformat->name : "";
    int playlist = strcmp(container, "hls") == 0 || strcmp(container, "dash") == 0;
    info->byte_size = m->format->pb && !playlist ? avio_size(m->format->pb) : -1;
    if (info->byte_size <= 0) info->byte_size = -1;
    cffm_layout layout = CFFM_LAYOUT_I420;
    info->layout = layout_of(m->codec->pix_fmt, &layout) ? layout : CFFM_LAYOUT_I420;
    snprintf(info->codec, sizeof info->codec, "%s", decoder->name);
    snprintf(info->container, sizeof info->container, "%s", m->format->iformat ? m->format->iformat->name : "");
    *out = m;
    return CFFM_OK;
}

static cffm_status deliver(cffm_media *m, cffm_frame *out, char *message, size_t message_size) {
    AVFrame *source = m->frame;
    cffm_layout layout;
    if (!layout_of(source->format, &layout)) {
        // 10-bit, 4:2:2, 4:4:4, RGB…: converted once to 8-bit I420.
        AVFrame *c = m->converted;
        if (!c || c->width != source->width || c->height != source->height) {
            av_frame_free(&m->converted);
            c = m->converted = av_frame_alloc();
            if (!c) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
            c->width = source->width;
            c->height = source->height;
            c->format = AV_PIX_FMT_YUV420P;
            if (av_frame_get_buffer(c, 32) < 0) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
        }
        m->sws = sws_getCachedContext(m->sws, source->width, source->height, source->format, c->width, c->height,
                                      AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
        if (!m->sws) { cffm_internal_say("no conversion from the decoder's pixel format", message, message_size); return CFFM_CORRUPT; }
        sws_scale(m->sws, (const uint8_t *const *)source->data, source->linesize, 0, source->height, c->data, c->linesize);
        source = c;
        layout = CFFM_LAYOUT_I420;
    }
    int planes = layout == CFFM_LAYOUT_I420 ? 3 : (layout == CFFM_LAYOUT_NV12 ? 2 : 1);
    for (int i = 0; i < 3; i++) {
        out->planes[i] = i < planes ? source->data[i] : NULL;
        out->strides[i] = i < planes ? source->linesize[i] : 0;
    }
    out->width = source->width;
    out->height = source->height;
    out->layout = layout;
    int64_t pts = m->frame->best_effort_timestamp;
    out->time = pts == AV_NOPTS_VALUE ? -1 : (double)pts * m->time_base;
    out->damaged = (m->frame->flags & AV_FRAME_FLAG_CORRUPT) != 0 || m->frame->decode_error_flags != 0;
    return CFFM_OK;
}

// The end of the frames: CFFM_END, or an error for a file cut short of its own index. When
// not one packet decoded, each is reported as corrupt first (some packets legitimately give
// no frame — VP8's hidden alt-ref frames —, so this is only said when none gave one).
static cffm_status end(cffm_media *m, char *message, size_t message_size) {
    if (m->frames_out == 0 && m->errors_reported < m->packets_sent) {
        m->errors_reported++;
        cffm_internal_say("the decoder gave no frame for this packet (a damaged frame)", message, message_size);
        return CFFM_CORRUPT;
    }
    if (m->indexed_end == 0) return CFFM_END;
    char text[160];
    snprintf(text, sizeof text, "the file is truncated: it ends at byte %lld, and its index lists frames up to byte %lld",
             (long long)m->truncated_at, (long long)m->indexed_end);
    cffm_internal_say(text, message, message_size);
    m->indexed_end = 0;  // said once; the next call is the end
    return CFFM_ERROR;
}

cffm_status cffm_next(cffm_media *m, cffm_frame *frame, char *message, size_t message_size) {
    memset(frame, 0, sizeof *frame);
    for (;;) {
        int error = avcodec_receive_frame(m->codec, m->frame);
        if (error == 0) { m->frames_out++; return deliver(m, frame, message, message_size); }
        if (error == AVERROR_EOF) return end(m, message, message_size);
        if (error != AVERROR(EAGAIN)) { m->errors_reported++; cffm_internal_describe(error, "decoding", message, message_size); return CFFM_CORRUPT; }
        if (m->draining) return end(m, message, message_size);
        if (atomic_load(&m->interrupted)) { cffm_internal_say("interrupted", message, message_size); return CFFM_INTERRUPTED; }
        arm(m);
        error = av_read_frame(m->format, m->packet);
        if (error < 0 && atomic_load(&m->overlong)) {
            char text[200];
            snprintf(text, sizeof text, "the stream sent over %lld bytes without completing a frame (a frame of %dx%d takes at most that)",
                     (long long)m->max_frame_bytes, m->codec->width, m->codec->height);
            cffm_internal_say(text, message, message_size);
            // Past the probe the unfinished frame is lost: a corrupt drop (CFFM_OVERLONG). In
            // the probe it was handed on already: the input just ends (CFFM_ERROR).
            return m->overlong_in_probe ? CFFM_ERROR : CFFM_OVERLONG;
        }
        if (error == AVERROR_EOF || (error == AVERROR(EIO) && m->close_delimited && m->close_is_end)) {
            check_truncation(m);
            m->draining = 1;
            avcodec_send_packet(m->codec, NULL);  // flush the frames the decoder still holds
            continue;
        }
        if (error == AVERROR_EXIT) { cffm_internal_say("interrupted (stopped, or no data within the timeout)", message, message_size); return CFFM_INTERRUPTED; }
        if (error == 0 && atomic_load(&m->overlong) && !m->overlong_in_probe) {
            // The read that was abandoned flushed the demuxer's parser (or a partial packet):
            // the unfinished frame comes back as a packet. Not decoded: it is the corrupt drop
            // CFFM_OVERLONG stands for, not a frame besides it.
            av_packet_unref(m->packet);
            cffm_internal_say("the stream sent more than a frame's bytes without completing one", message, message_size);
            return CFFM_OVERLONG;
        }
        if (m->bounded_pb) m->packet_mark = m->bounded_pb->bytes_read;
        if (error < 0) { cffm_internal_describe(error, "reading", message, message_size); return CFFM_ERROR; }
        if (m->packet->stream_index != m->stream) { av_packet_unref(m->packet); continue; }
        if (m->overlong_in_probe && m->packet->size > m->max_frame_bytes) {
            // The frame that never ended, handed on by the probe's parser when the probe gave
            // up on it: larger than any frame of this size can be, so a corrupt drop, not a
            // frame (decoded, its first rows looked like a picture).
            av_packet_unref(m->packet);
            m->errors_reported++;
            cffm_internal_say("a frame larger than any frame of its size can be (the stream's frame that never ended)", message,
                              message_size);
            return CFFM_CORRUPT;
        }
        error = avcodec_send_packet(m->codec, m->packet);
        av_packet_unref(m->packet);
        m->packets_sent++;
        if (error < 0 && error != AVERROR(EAGAIN)) { m->errors_reported++; cffm_internal_describe(error, "decoding a packet", message, message_size); return CFFM_CORRUPT; }
    }
}

cffm_status cffm_seek(cffm_media *m, double seconds, char *message, size_t message_size) {
    int64_t target = (int64_t)(seconds / m->time_base);
    arm(m);
    int error = av_seek_frame(m->format, m->stream, target, AVSEEK_FLAG_BACKWARD);
    if (error < 0) { cffm_internal_describe(error, "cannot seek", message, message_size); return CFFM_ERROR; }
    avcodec_flush_buffers(m->codec);
    if (m->bounded_pb) m->packet_mark = m->bounded_pb->bytes_read;  // what the seek read is not a frame's
    m->draining = 0;
    return CFFM_OK;
}

int32_t cffm_has_protocol(const char *scheme) {
    // RTSP is a demuxer in libavformat (over the tcp/udp protocols), not a protocol of its own.
    if (strcmp(scheme, "rtsp") == 0 || strcmp(scheme, "rtsps") == 0) return av_find_input_format("rtsp") != NULL;
    void *opaque = NULL;
    const char *name;
    while ((name = avio_enum_protocols(&opaque, 0))) {
        if (strcmp(name, scheme) == 0) return 1;
    }
    return 0;
}

// MARK: Writing
