// CFFmpeg's writers (cffm_writer): H.264 through libx264 into MP4/MOV, JPEG packets into
// AVI. See include/CFFmpeg.h. Plain C over libavformat/libavcodec 5.1.
#include "CFFmpeg.h"
#include "shared.h"
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/time.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cffm_writer {
    AVFormatContext *format;
    AVCodecContext *codec;
    AVStream *stream;
    AVFrame *frame;  // the encoder's input (yuv420p), owned
    AVPacket *packet;
    struct SwsContext *sws;
    int finished;
    // For the size a finished file would have now: fragments hold packets in memory until the
    // next key frame, so the file's own size lags behind.
    int64_t header_bytes, packet_bytes, packets, key_packets, key_bytes, frames;
    // Pass-through: the next free slot on the constant-rate timeline (frames + gaps filled).
    int64_t slots;
    // The hard size limit (0: none), and whether a packet has been held back by it.
    int64_t max_bytes;
    int over_limit;
    // Packets passed through as they are (Motion-JPEG in AVI): no encoder.
    int passthrough;
    // Space held back on the recording's disk for its index (AVI writes it at the end): a file
    // of its own, given up when a write fails (a full disk) so the trailer still fits.
    char *reserve_path;
    int64_t reserve_bytes;
    char *path;
    // Fragmented MP4/MOV: where the last fragment known to be whole on disk ends, and the
    // packets up to there. A write that fails (a full disk) tears the fragment under way; the
    // file is cut back to this point at the finish, so it holds only whole fragments and the
    // frame count is theirs (it said 782 where the file held 725).
    int64_t committed_bytes, committed_packets, fragments;
    int torn;
};

// 1 MiB holds the indexes (idx1: 16 bytes a frame, ix00: 8) of about 43,000 frames.
static const int64_t reserve_step = 1 << 20;

static int grow_reserve(cffm_writer *w) {
    int fd = open(w->reserve_path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int error = posix_fallocate(fd, 0, w->reserve_bytes + reserve_step);
    close(fd);
    if (error != 0) return -1;
    w->reserve_bytes += reserve_step;
    return 0;
}

// Whether the recording's disk has room for `bytes` more (and a margin): a frame is written
// whole or not at all, so the file ends at its last complete frame when the disk fills.
static int has_room(const cffm_writer *w, int64_t bytes) {
    struct statvfs fs;
    if (!w->path || statvfs(w->path, &fs) != 0) return 1;  // cannot tell: let the write say
    return (int64_t)fs.f_bavail * (int64_t)fs.f_frsize >= bytes + (64 << 10);
}

static void release_reserve(cffm_writer *w) {
    if (w->reserve_path) {
        unlink(w->reserve_path);
        free(w->reserve_path);
        w->reserve_path = NULL;
    }
}

void cffm_writer_free(cffm_writer *w) {
    if (!w) return;
    release_reserve(w);
    free(w->path);
    if (w->format && w->format->pb) avio_closep(&w->format->pb);
    avformat_free_context(w->format);
    avcodec_free_context(&w->codec);
    av_frame_free(&w->frame);
    av_packet_free(&w->packet);
    sws_freeContext(w->sws);
    free(w);
}

// The size a fragmented MP4/MOV would have finished, holding `bytes` of packets in `samples`
// samples of which `keys` are key frames (each starts a fragment, as does each quarter second):
// generous per-sample (trun entry), per-fragment (moof, traf, mdat headers: the fragments so
// far, one per key frame besides, and the one under way) and trailer (mfra) allowances, so
// that a limit checked against it is never passed.
static int64_t finished_size(const cffm_writer *w, int64_t bytes, int64_t samples, int64_t keys) {
    return w->header_bytes + bytes + 24 * samples + 320 * (w->fragments + keys + 2) + 1024;
}

void cffm_writer_set_limit(cffm_writer *w, int64_t max_bytes) {
    if (w) w->max_bytes = max_bytes;
}

int64_t cffm_writer_frames_written(const cffm_writer *w) { return w ? (w->torn && !w->passthrough ? w->committed_packets : w->packets) : 0; }

int cffm_writer_at_limit(const cffm_writer *w) { return w ? w->over_limit : 0; }

int64_t cffm_writer_bytes(const cffm_writer *w) {
    if (!w || !w->format || !w->format->pb) return 0;
    if (w->passthrough) {
        // AVI: what is written, plus the indexes the trailer adds (idx1: 16 bytes a frame;
        // OpenDML's ix00 standard index: 8 a frame) and headers of further RIFF-AVIX chunks.
        return avio_tell(w->format->pb) + 24 * w->frames + 4096 * (1 + avio_tell(w->format->pb) / (1 << 30));
    }
    // Frames the encoder still holds (look-ahead, B-frames) count at the average size of the
    // packets between key frames (a key frame is many times larger: counting the held frames
    // at the first one's size stopped 200 KB recordings after half a second), or at a quarter
    // of a key frame before there are any. This only decides when to stop giving frames; the
    // limit itself is enforced packet by packet (`fits`).
    int64_t held = w->frames > w->packets ? w->frames - w->packets : 0;
    int64_t others = w->packets - w->key_packets;
    int64_t average = others > 0 ? (w->packet_bytes - w->key_bytes) / others : (w->key_packets > 0 ? w->key_bytes / w->key_packets / 4 : 0);
    int64_t projected = finished_size(w, w->packet_bytes + held * average, w->frames, w->key_packets);
    int64_t written = avio_tell(w->format->pb);
    return projected > written ? projected : written;
}

cffm_status cffm_writer_open(const char *path, const char *format, const cffm_writer_settings *s, cffm_writer **out,
                             char *message, size_t message_size) {
    cffm_internal_quiet();
    *out = NULL;
    if (s->width < 2 || s->height < 2 || (s->width & 1) || (s->height & 1) || !(s->frame_rate > 0)) {
        cffm_internal_say("the frame size must be even and the frame rate positive", message, message_size);
        return CFFM_ERROR;
    }
    const AVCodec *encoder = avcodec_find_encoder_by_name("libx264");
    if (!encoder) { cffm_internal_say("this libavcodec has no libx264 encoder", message, message_size); return CFFM_ERROR; }
    cffm_writer *w = calloc(1, sizeof *w);
    if (!w) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    int error = avformat_alloc_output_context2(&w->format, NULL, format, path);
    if (error < 0 || !w->format) { cffm_internal_describe(error, "no muxer", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    w->codec = avcodec_alloc_context3(encoder);
    w->frame = av_frame_alloc();
    w->packet = av_packet_alloc();
    w->stream = avformat_new_stream(w->format, NULL);
    if (!w->codec || !w->frame || !w->packet || !w->stream) { cffm_internal_say("out of memory", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    AVRational rate = av_d2q(s->frame_rate, 100000);
    w->codec->width = s->width;
    w->codec->height = s->height;
    w->codec->pix_fmt = AV_PIX_FMT_YUV420P;
    // Timestamps from the frames' own times, on a fine clock (variable frame rate): a dropped
    // frame leaves a gap, a camera that changes rate keeps its time.
    w->codec->time_base = (AVRational){1, CFFM_WRITER_TIMESCALE};
    w->codec->framerate = rate;
    w->codec->gop_size = s->keyframe_interval > 0 ? s->keyframe_interval : 60;
    // No B-frames: with the frames' own (variable) times, reordering made the muxer shift the
    // whole timeline by the span of the first frames — after early drops a 3 s recording read
    // as 3.2 s — and held frames back from the file (a crash lost them). Costs some size at
    // the same quality (not measured here).
    w->codec->max_b_frames = 0;
    w->codec->thread_count = 2;
    if (w->format->oformat->flags & AVFMT_GLOBALHEADER) w->codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary *options = NULL;
    av_dict_set(&options, "preset", s->preset && *s->preset ? s->preset : "veryfast", 0);
    av_dict_set_int(&options, "crf", s->crf >= 0 && s->crf <= 51 ? s->crf : 23, 0);
    error = avcodec_open2(w->codec, encoder, &options);
    av_dict_free(&options);
    if (error < 0) { cffm_internal_describe(error, "cannot open libx264", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    if (cffm_internal_connect_encoder(w->codec, w->stream, w->frame) < 0) { cffm_internal_say("out of memory", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    error = avio_open(&w->format->pb, path, AVIO_FLAG_WRITE);
    if (error < 0) { cffm_internal_describe(error, "cannot open the file", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    // Fragmented: a moov up front, then a fragment at each key frame and at least every quarter
    // second (frag_duration). A recording cut by a crash or a full disk plays up to its last
    // complete fragment: a crash loses at most the fragment under way and the frames the encoder
    // still holds (with key frames every 2 s and no frag_duration it lost up to 2.3 s).
    // Each fragment goes to the file when complete (flush_packets), not when AVIO's buffer fills.
    av_dict_set(&options, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
    av_dict_set_int(&options, "frag_duration", 250000, 0);
    w->format->flush_packets = 1;
    error = avformat_write_header(w->format, &options);
    av_dict_free(&options);
    if (error < 0) { cffm_internal_describe(error, "cannot write the header", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    avio_flush(w->format->pb);
    w->header_bytes = avio_tell(w->format->pb);
    w->committed_bytes = w->header_bytes;
    w->path = strdup(path);
    if (!w->path) { cffm_internal_say("out of memory", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    *out = w;
    return CFFM_OK;
}

// Whether a packet of `size` bytes still fits under the hard limit: the finished file's size
// with it. Once one does not, none after it is written either (a later packet may depend on it).
static int fits(cffm_writer *w, int64_t size, int key) {
    if (w->max_bytes <= 0) return 1;
    if (!w->over_limit && finished_size(w, w->packet_bytes + size, w->packets + 1, w->key_packets + key) > w->max_bytes) {
        w->over_limit = 1;
    }
    return !w->over_limit;
}

// Sends `frame` (NULL: flush) and writes every packet the encoder has ready.
static cffm_status encode(cffm_writer *w, AVFrame *frame, char *message, size_t message_size) {
    int error = avcodec_send_frame(w->codec, frame);
    if (error < 0) { cffm_internal_describe(error, "encoding", message, message_size); return CFFM_ERROR; }
    for (;;) {
        error = avcodec_receive_packet(w->codec, w->packet);
        if (error == AVERROR(EAGAIN) || error == AVERROR_EOF) return CFFM_OK;
        if (error < 0) { cffm_internal_describe(error, "encoding", message, message_size); return CFFM_ERROR; }
        int key = (w->packet->flags & AV_PKT_FLAG_KEY) != 0;
        if (!fits(w, w->packet->size, key)) {
            av_packet_unref(w->packet);
            continue;
        }
        w->packet_bytes += w->packet->size;
        w->packets += 1;
        if (key) {
            w->key_packets += 1;
            w->key_bytes += w->packet->size;
        }
        // One frame time, unless the encoder said: the muxer gives the file's last sample the
        // duration of its packet, or else the gap before it (after dropped frames a 3 s
        // recording then lasted 3.13 s).
        if (w->packet->duration <= 0 && w->codec->framerate.num > 0) {
            w->packet->duration = av_rescale_q(1, av_inv_q(w->codec->framerate), w->codec->time_base);
        }
        av_packet_rescale_ts(w->packet, w->codec->time_base, w->stream->time_base);
        w->packet->stream_index = w->stream->index;
        error = av_interleaved_write_frame(w->format, w->packet);  // takes the packet's reference
        if (error >= 0 && w->format->pb) avio_flush(w->format->pb);
        if (error >= 0 && w->format->pb && w->format->pb->error < 0) error = w->format->pb->error;
        if (error < 0) {
            w->torn = 1;
            cffm_internal_describe(error, "writing", message, message_size);
            return CFFM_ERROR;
        }
        // The file grew: the muxer wrote out the fragment before this packet (a key frame, or
        // a quarter second, starts a new one; packets wait in memory until then), and the flush
        // put it on disk. Every packet but this one is in the file.
        if (!w->passthrough && w->format->pb && avio_tell(w->format->pb) > w->committed_bytes) {
            w->committed_bytes = avio_tell(w->format->pb);
            w->committed_packets = w->packets - 1;
            w->fragments += 1;
        }
    }
}

cffm_status cffm_writer_write(cffm_writer *w, const uint8_t *const planes[3], const int32_t strides[3], cffm_input_layout layout,
                              int64_t pts, char *message, size_t message_size) {
    if (w->finished) { cffm_internal_say("the recording is finished", message, message_size); return CFFM_ERROR; }
    if (av_frame_make_writable(w->frame) < 0) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    enum AVPixelFormat source = cffm_internal_input_format(layout);
    w->sws = sws_getCachedContext(w->sws, w->codec->width, w->codec->height, source, w->codec->width, w->codec->height,
                                  AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (!w->sws) { cffm_internal_say("no conversion from this pixel layout", message, message_size); return CFFM_ERROR; }
    const int source_strides[4] = {strides[0], strides[1], strides[2], 0};
    const uint8_t *source_planes[4] = {planes[0], planes[1], planes[2], NULL};
    sws_scale(w->sws, source_planes, source_strides, 0, w->codec->height, w->frame->data, w->frame->linesize);
    w->frame->pts = pts;
    w->frames += 1;
    return encode(w, w->frame, message, message_size);
}

cffm_status cffm_writer_open_mjpeg(const char *path, int32_t width, int32_t height, double frame_rate, cffm_writer **out,
                                   char *message, size_t message_size) {
    cffm_internal_quiet();
    *out = NULL;
    if (width < 1 || height < 1 || !(frame_rate > 0)) { cffm_internal_say("the frame size and rate must be positive", message, message_size); return CFFM_ERROR; }
    cffm_writer *w = calloc(1, sizeof *w);
    if (!w) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    w->passthrough = 1;
    w->path = strdup(path);
    int error = avformat_alloc_output_context2(&w->format, NULL, "avi", path);
    if (error < 0 || !w->format) { cffm_internal_describe(error, "no AVI muxer", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    w->packet = av_packet_alloc();
    w->stream = avformat_new_stream(w->format, NULL);
    if (!w->packet || !w->stream) { cffm_internal_say("out of memory", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    AVRational rate = av_d2q(frame_rate, 100000);
    AVCodecParameters *p = w->stream->codecpar;
    p->codec_type = AVMEDIA_TYPE_VIDEO;
    p->codec_id = AV_CODEC_ID_MJPEG;
    p->codec_tag = MKTAG('M', 'J', 'P', 'G');
    p->width = width;
    p->height = height;
    w->stream->time_base = av_inv_q(rate);
    w->stream->avg_frame_rate = rate;
    w->stream->r_frame_rate = rate;
    error = avio_open(&w->format->pb, path, AVIO_FLAG_WRITE);
    if (error < 0) { cffm_internal_describe(error, "cannot open the file", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    // The index's space, held in a hidden file beside the recording.
    const char *slash = strrchr(path, '/');
    size_t folder = slash ? (size_t)(slash - path + 1) : 0;
    size_t length = strlen(path) + 16;
    w->reserve_path = malloc(length);
    if (!w->reserve_path) { cffm_internal_say("out of memory", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    snprintf(w->reserve_path, length, "%.*s.%s.reserve", (int)folder, path, path + folder);
    int reserve = open(w->reserve_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (reserve >= 0) close(reserve);
    if (reserve < 0 || grow_reserve(w) != 0) {
        cffm_internal_say("no room on the disk for the recording's index", message, message_size);
        cffm_writer_free(w);
        return CFFM_ERROR;
    }
    // Each frame goes to the file as it comes; past 1 GiB the muxer continues in RIFF-AVIX
    // chunks with OpenDML indexes (no 4 GiB limit).
    w->format->flush_packets = 1;
    error = avformat_write_header(w->format, NULL);
    if (error < 0) { cffm_internal_describe(error, "cannot write the header", message, message_size); cffm_writer_free(w); return CFFM_ERROR; }
    w->header_bytes = avio_tell(w->format->pb);
    *out = w;
    return CFFM_OK;
}

cffm_status cffm_writer_write_packet(cffm_writer *w, const uint8_t *data, int32_t size, int64_t slot, char *message,
                                     size_t message_size) {
    if (w->finished || !w->passthrough) { cffm_internal_say("not an open pass-through recording", message, message_size); return CFFM_ERROR; }
    // The frame's slot on the constant-rate timeline: after frames were dropped it is past the
    // next one, and the muxer fills the gap with empty chunks (players show the last frame
    // again), so the file plays in real time. A slot that does not advance is the next one
    // (MJPEGMovieWriter leaves out a frame with a time whose slot is taken; without a time it
    // asks for the next slot).
    int64_t at = slot > w->slots ? slot : w->slots;
    // More slots need more index: grow the reserve first, and end the recording (with room
    // for its index) when the disk cannot give it.
    if (at / 40000 > w->slots / 40000 && w->slots > 0 && grow_reserve(w) != 0) {
        cffm_internal_say("the disk is full (no room for more of the index)", message, message_size);
        return CFFM_ERROR;
    }
    if (!has_room(w, size)) { cffm_internal_say("the disk is full", message, message_size); return CFFM_ERROR; }
    if (av_new_packet(w->packet, size) < 0) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    memcpy(w->packet->data, data, (size_t)size);
    w->packet->pts = w->packet->dts = at;
    w->packet->duration = 1;
    w->packet->flags |= AV_PKT_FLAG_KEY;
    w->packet->stream_index = w->stream->index;
    int error = av_write_frame(w->format, w->packet);
    av_packet_unref(w->packet);
    if (error < 0) { cffm_internal_describe(error, "writing", message, message_size); return CFFM_ERROR; }
    if (w->format->pb && w->format->pb->error < 0) { cffm_internal_describe(w->format->pb->error, "writing", message, message_size); return CFFM_ERROR; }
    w->frames += 1;
    w->slots = at + 1;
    w->packets += 1;
    w->packet_bytes += size;
    return CFFM_OK;
}

int64_t cffm_writer_slots(const cffm_writer *w) { return w ? w->slots : 0; }

cffm_status cffm_writer_finish(cffm_writer *w, char *message, size_t message_size) {
    if (w->finished) return CFFM_OK;
    w->finished = 1;
    cffm_status status = w->passthrough ? CFFM_OK : encode(w, NULL, message, message_size);
    if (w->passthrough) {
        // The reserve makes room for the index; a write that failed (a full disk) left AVIO's
        // error set, which the trailer must not inherit: the frames before it are complete.
        release_reserve(w);
        if (w->format->pb) {
            w->format->pb->error = 0;
            w->format->pb->eof_reached = 0;
        }
    }
    int error = av_write_trailer(w->format);
    if (status == CFFM_OK && error < 0) { cffm_internal_describe(error, "writing the trailer", message, message_size); status = CFFM_ERROR; }
    if (w->format->pb) {
        avio_flush(w->format->pb);
        if (status == CFFM_OK && w->format->pb->error < 0) { cffm_internal_describe(w->format->pb->error, "writing", message, message_size); status = CFFM_ERROR; }
        avio_closep(&w->format->pb);
    }
    // MP4/MOV that failed part-way (the last fragment, or the trailer's, torn): back to the end
    // of the last whole fragment. Without the trailer's fragment index the file still plays.
    if (!w->passthrough && (w->torn || status != CFFM_OK) && w->path) {
        w->torn = 1;
        if (truncate(w->path, w->committed_bytes) != 0 && status == CFFM_OK) {
            cffm_internal_describe(AVERROR(errno), "cutting back to the last whole fragment", message, message_size);
            status = CFFM_ERROR;
        }
    }
    return status;
}
