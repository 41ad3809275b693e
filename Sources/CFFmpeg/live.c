// CFFmpeg's live encoder (cffm_live): H.264 through libx264 with low-latency settings, muxed
// into fragmented MP4 in memory, one fragment a frame, for Media Source Extensions in a
// browser. See include/CFFmpeg.h. Plain C over libavformat/libavcodec 5.1.
#include "CFFmpeg.h"
#include "shared.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <stdlib.h>
#include <string.h>

// Bytes the muxer has written since they were last taken: the init segment, then a fragment.
typedef struct {
    uint8_t *bytes;
    size_t count, capacity;
    int failed;
} sink;

struct cffm_live {
    AVFormatContext *format;
    AVCodecContext *codec;
    AVStream *stream;
    AVFrame *frame;
    AVPacket *packet;
    struct SwsContext *sws;
    uint8_t *io_buffer;
    sink out;
    uint8_t *init;
    size_t init_size;
    char codec_string[32];
};

static int take(void *opaque, uint8_t *data, int size) {  // FFmpeg 5.1: not const
    sink *s = opaque;
    if (size <= 0) return 0;
    if (s->count + (size_t)size > s->capacity) {
        size_t capacity = s->capacity ? s->capacity : 1 << 16;
        while (capacity < s->count + (size_t)size) capacity *= 2;
        uint8_t *grown = realloc(s->bytes, capacity);
        if (!grown) { s->failed = 1; return AVERROR(ENOMEM); }
        s->bytes = grown;
        s->capacity = capacity;
    }
    memcpy(s->bytes + s->count, data, (size_t)size);
    s->count += (size_t)size;
    return size;
}

void cffm_live_close(cffm_live *l) {
    if (!l) return;
    if (l->format && l->format->pb) {
        av_freep(&l->format->pb->buffer);  // the AVIO buffer (io_buffer, or its replacement)
        avio_context_free(&l->format->pb);
    }
    avformat_free_context(l->format);
    av_free(l->io_buffer);  // not yet the AVIO context's
    avcodec_free_context(&l->codec);
    av_frame_free(&l->frame);
    av_packet_free(&l->packet);
    sws_freeContext(l->sws);
    free(l->out.bytes);
    free(l->init);
    free(l);
}

cffm_status cffm_live_open(const cffm_live_settings *s, cffm_live **out, char *message, size_t message_size) {
    cffm_internal_quiet();
    *out = NULL;
    if (s->width < 2 || s->height < 2 || (s->width & 1) || (s->height & 1) || !(s->frame_rate > 0) || s->bitrate < 10000) {
        cffm_internal_say("the frame size must be even, the frame rate positive and the bit rate at least 10 kbit/s", message,
                          message_size);
        return CFFM_ERROR;
    }
    const AVCodec *encoder = avcodec_find_encoder_by_name("libx264");
    if (!encoder) { cffm_internal_say("this libavcodec has no libx264 encoder", message, message_size); return CFFM_ERROR; }
    cffm_live *l = calloc(1, sizeof *l);
    if (!l) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    int error = avformat_alloc_output_context2(&l->format, NULL, "mp4", NULL);
    l->codec = avcodec_alloc_context3(encoder);
    l->frame = av_frame_alloc();
    l->packet = av_packet_alloc();
    l->stream = l->format ? avformat_new_stream(l->format, NULL) : NULL;
    l->io_buffer = av_malloc(1 << 16);
    if (error < 0 || !l->codec || !l->frame || !l->packet || !l->stream || !l->io_buffer) {
        cffm_internal_say("out of memory", message, message_size);
        cffm_live_close(l);
        return CFFM_ERROR;
    }
    l->codec->width = s->width;
    l->codec->height = s->height;
    l->codec->pix_fmt = AV_PIX_FMT_YUV420P;
    l->codec->time_base = (AVRational){1, CFFM_WRITER_TIMESCALE};
    l->codec->framerate = av_d2q(s->frame_rate, 100000);
    l->codec->gop_size = s->keyframe_interval > 0 ? s->keyframe_interval : (int)(s->frame_rate + 0.5);
    l->codec->max_b_frames = 0;
    // One thread: zerolatency's sliced threads would take the second core from capture.
    l->codec->thread_count = 1;
    // Quality by CRF, capped at the bit rate over a buffer of a second (VBV): a still scene
    // costs little, a busy one no more than the cap.
    l->codec->rc_max_rate = s->bitrate;
    l->codec->rc_buffer_size = s->bitrate;
    l->codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;  // avcC in the init segment
    AVDictionary *options = NULL;
    av_dict_set(&options, "preset", "veryfast", 0);
    av_dict_set(&options, "tune", "zerolatency", 0);
    av_dict_set_int(&options, "crf", 23, 0);
    error = avcodec_open2(l->codec, encoder, &options);
    av_dict_free(&options);
    if (error < 0) { cffm_internal_describe(error, "cannot open libx264", message, message_size); cffm_live_close(l); return CFFM_ERROR; }
    if (l->codec->extradata_size >= 8 && l->codec->extradata[0] == 1) {
        // avcC: version, profile, constraints, level.
        snprintf(l->codec_string, sizeof l->codec_string, "avc1.%02X%02X%02X", l->codec->extradata[1], l->codec->extradata[2],
                 l->codec->extradata[3]);
    } else if (l->codec->extradata_size >= 8) {
        // Annex B (start code, then the SPS NAL: its header byte, profile, constraints, level).
        const uint8_t *e = l->codec->extradata;
        int at = e[2] == 1 ? 3 : 4;
        snprintf(l->codec_string, sizeof l->codec_string, "avc1.%02X%02X%02X", e[at + 1], e[at + 2], e[at + 3]);
    } else {
        cffm_internal_say("libx264 gave no stream header", message, message_size);
        cffm_live_close(l);
        return CFFM_ERROR;
    }
    if (cffm_internal_connect_encoder(l->codec, l->stream, l->frame) < 0) { cffm_internal_say("out of memory", message, message_size); cffm_live_close(l); return CFFM_ERROR; }
    l->format->pb = avio_alloc_context(l->io_buffer, 1 << 16, 1, &l->out, NULL, take, NULL);
    if (!l->format->pb) { cffm_internal_say("out of memory", message, message_size); cffm_live_close(l); return CFFM_ERROR; }
    l->io_buffer = NULL;  // the AVIO context's now
    // Fragmented for MSE: an empty moov (the init segment), then a fragment only when asked
    // (frag_custom: after each frame), each with its own base offset (default_base_moof).
    av_dict_set(&options, "movflags", "frag_custom+empty_moov+default_base_moof+omit_tfhd_offset", 0);
    error = avformat_write_header(l->format, &options);
    av_dict_free(&options);
    if (error < 0) { cffm_internal_describe(error, "cannot write the header", message, message_size); cffm_live_close(l); return CFFM_ERROR; }
    avio_flush(l->format->pb);
    if (l->out.failed || l->out.count == 0) { cffm_internal_say("no init segment", message, message_size); cffm_live_close(l); return CFFM_ERROR; }
    l->init = malloc(l->out.count);
    if (!l->init) { cffm_internal_say("out of memory", message, message_size); cffm_live_close(l); return CFFM_ERROR; }
    memcpy(l->init, l->out.bytes, l->out.count);
    l->init_size = l->out.count;
    l->out.count = 0;
    *out = l;
    return CFFM_OK;
}

const uint8_t *cffm_live_init_segment(const cffm_live *l, size_t *size) {
    *size = l->init_size;
    return l->init;
}

const char *cffm_live_codec(const cffm_live *l) { return l->codec_string; }

cffm_status cffm_live_encode(cffm_live *l, const uint8_t *const planes[3], const int32_t strides[3], cffm_input_layout layout,
                             int64_t pts, int32_t force_key, const uint8_t **fragment, size_t *size, int32_t *key, char *message,
                             size_t message_size) {
    *fragment = NULL;
    *size = 0;
    *key = 0;
    l->out.count = 0;
    if (av_frame_make_writable(l->frame) < 0) { cffm_internal_say("out of memory", message, message_size); return CFFM_ERROR; }
    l->sws = sws_getCachedContext(l->sws, l->codec->width, l->codec->height, cffm_internal_input_format(layout), l->codec->width,
                                  l->codec->height, AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (!l->sws) { cffm_internal_say("no conversion from this pixel layout", message, message_size); return CFFM_ERROR; }
    const int source_strides[4] = {strides[0], strides[1], strides[2], 0};
    const uint8_t *source_planes[4] = {planes[0], planes[1], planes[2], NULL};
    sws_scale(l->sws, source_planes, source_strides, 0, l->codec->height, l->frame->data, l->frame->linesize);
    l->frame->pts = pts;
    l->frame->pict_type = force_key ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    l->frame->key_frame = force_key ? 1 : 0;
    int error = avcodec_send_frame(l->codec, l->frame);
    if (error < 0) { cffm_internal_describe(error, "encoding", message, message_size); return CFFM_ERROR; }
    int wrote = 0;
    for (;;) {
        error = avcodec_receive_packet(l->codec, l->packet);
        if (error == AVERROR(EAGAIN) || error == AVERROR_EOF) break;
        if (error < 0) { cffm_internal_describe(error, "encoding", message, message_size); return CFFM_ERROR; }
        if (l->packet->flags & AV_PKT_FLAG_KEY) *key = 1;
        if (l->packet->duration <= 0) l->packet->duration = av_rescale_q(1, av_inv_q(l->codec->framerate), l->codec->time_base);
        av_packet_rescale_ts(l->packet, l->codec->time_base, l->stream->time_base);
        l->packet->stream_index = l->stream->index;
        error = av_write_frame(l->format, l->packet);
        av_packet_unref(l->packet);
        if (error < 0) { cffm_internal_describe(error, "muxing", message, message_size); return CFFM_ERROR; }
        wrote = 1;
    }
    if (!wrote) return CFFM_OK;
    error = av_write_frame(l->format, NULL);  // frag_custom: the fragment is complete
    avio_flush(l->format->pb);
    if (error < 0 || l->out.failed) { cffm_internal_describe(error < 0 ? error : AVERROR(ENOMEM), "muxing", message, message_size); return CFFM_ERROR; }
    *fragment = l->out.bytes;
    *size = l->out.count;
    return CFFM_OK;
}
