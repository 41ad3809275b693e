// CFFmpeg: video files and network streams through libavformat + libavcodec, behind a small C
// interface: an opaque handle, plain structs, status codes and a message buffer. FFmpeg's own
// structs and macros never reach Swift. Every symbol is prefixed `cffm_`.
#ifndef CFFMPEG_H
#define CFFMPEG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cffm_media cffm_media;

typedef enum {
    CFFM_OK = 0,
    /// The input has no more frames.
    CFFM_END = 1,
    /// A packet or frame could not be decoded; the next call goes on with the next one.
    CFFM_CORRUPT = 2,
    /// A read was interrupted (stop requested or the read timeout passed).
    CFFM_INTERRUPTED = 3,
    /// A network input (or a local one that cannot seek) sent more bytes than any frame of its
    /// size can take (`cffm_frame_byte_limit`) without completing one, counted in bytes read
    /// since the last packet: the read was abandoned before the demuxer's buffer grew further.
    /// The input is left unusable; reopen it to go on.
    CFFM_OVERLONG = 4,
    /// The input was read, and its video is over the pixel budget, or opening it failed on what
    /// it sent (a demuxer's error that no transport returns, such as a Y4M header with no valid
    /// size): reading it again will not help (a data error, not an unreachable stream). (No
    /// video stream or no size yet is CFFM_ERROR: a live stream joined before its parameter sets
    /// may have them next time; so is INVALIDDATA, also what the probe says of a connection
    /// closed before any byte came.)
    CFFM_REJECTED = 5,
    /// Opening or reading failed; `message` says why.
    CFFM_ERROR = -1,
} cffm_status;

/// How a decoded frame's planes are laid out (FrameKit's formats): 8-bit always; anything the
/// decoder gives in another layout (10-bit, 4:2:2, 4:4:4, RGB) is converted to I420.
typedef enum {
    CFFM_LAYOUT_I420 = 0,
    CFFM_LAYOUT_NV12 = 1,
    CFFM_LAYOUT_GRAY8 = 2,
} cffm_layout;

typedef struct {
    int32_t width;
    int32_t height;
    /// Frames per second (the stream's average or guessed rate; 0 if unknown).
    double frame_rate;
    /// Seconds, or 0 when unknown (live streams).
    double duration;
    /// Bytes the input says it holds (a file's size, an http response's Content-Length); -1
    /// when it does not say (a live stream, an RTSP session, a playlist's segments).
    int64_t byte_size;
    cffm_layout layout;
    /// The decoder's name ("h264", "hevc", "vp9"…) and the container's ("mov,mp4,…").
    char codec[32];
    char container[64];
} cffm_info;

typedef struct {
    /// Valid until the next `cffm_next` or `cffm_close`.
    const uint8_t *planes[3];
    int32_t strides[3];
    int32_t width;
    int32_t height;
    cffm_layout layout;
    /// Seconds on the media timeline (the frame's best-effort timestamp), and whether the
    /// decoder marked it damaged.
    double time;
    int32_t damaged;
} cffm_frame;

/// Opens `url` (a path or rtsp://, tcp://, udp://, http(s)://, srt://…) and its best video
/// stream. `threads`: decoder threads (1…16). `timeout_seconds`: how long one open or read may
/// block (network inputs) before it fails as CFFM_INTERRUPTED. `max_pixels`: the largest
/// picture any decoder, the probing ones included, may allocate (0: FFmpeg's own limit); a
/// header claiming more is an error before the memory is taken. The demuxer is probed.
cffm_status cffm_open(const char *url, int32_t threads, double timeout_seconds,
                      int64_t max_pixels, cffm_media **out, cffm_info *info, char *message, size_t message_size);

/// The most bytes a live stream may send between two packets: six bytes a pixel of its frame
/// (libjpeg-turbo's worst case for a JPEG, far above any H.264 or HEVC frame) and 4 MiB.
int64_t cffm_frame_byte_limit(int32_t width, int32_t height);

/// Decodes the next frame into `frame`.
cffm_status cffm_next(cffm_media *media, cffm_frame *frame, char *message, size_t message_size);

/// Seeks to the key frame at or before `seconds` (files); frames before `seconds` are then
/// skipped by the caller.
cffm_status cffm_seek(cffm_media *media, double seconds, char *message, size_t message_size);

/// A live input: an http(s) response with no length that the server closes (FFmpeg says EIO)
/// has ended, as a tcp:// stream that closes has (CFFM_END). For a file it stays an error: a
/// chunked body cut off says EIO too.
void cffm_read_close_as_end(cffm_media *media);

/// Makes a blocking read return CFFM_INTERRUPTED soon (any thread may call it).
void cffm_interrupt(cffm_media *media);

void cffm_close(cffm_media *media);

/// Whether the linked libavformat can open this URL scheme ("rtsp", "srt", "file"…).
int32_t cffm_has_protocol(const char *scheme);

// MARK: Writing (H.264 in MP4 or MOV; Motion-JPEG passed through into AVI)

typedef struct cffm_writer cffm_writer;

/// The pixel layouts a frame to encode may come in (FrameKit's formats).
typedef enum {
    CFFM_INPUT_I420 = 0,
    CFFM_INPUT_NV12 = 1,
    CFFM_INPUT_GRAY8 = 2,
    CFFM_INPUT_YUYV = 3,
    CFFM_INPUT_BGRA = 4,
    CFFM_INPUT_RGB24 = 5,
} cffm_input_layout;

typedef struct {
    int32_t width;
    int32_t height;
    double frame_rate;
    /// libx264's constant rate factor (0–51, lower is better) and preset ("veryfast"…).
    int32_t crf;
    const char *preset;
    /// Frames between key frames: each starts a fragment, the most a crash can lose.
    int32_t keyframe_interval;
} cffm_writer_settings;

/// Creates the encoder (libx264, yuv420p) and the muxer for `format` ("mp4" or "mov") writing
/// to `path`, which must exist (FrameKit creates it first, exclusively). The file is
/// fragmented: playable up to its last complete fragment if the process dies.
cffm_status cffm_writer_open(const char *path, const char *format, const cffm_writer_settings *settings, cffm_writer **out,
                             char *message, size_t message_size);

/// The time base of `cffm_writer_write`'s timestamps: 1/90000 s (MPEG's clock).
#define CFFM_WRITER_TIMESCALE 90000

/// Encodes one frame, presented at `pts` (in 1/CFFM_WRITER_TIMESCALE s from the recording's
/// start, increasing; gaps where frames were dropped, so the file lasts as long as was recorded),
/// and writes what the encoder has ready.
cffm_status cffm_writer_write(cffm_writer *writer, const uint8_t *const planes[3], const int32_t strides[3], cffm_input_layout layout,
                              int64_t pts, char *message, size_t message_size);

/// A Motion-JPEG AVI at `path` (which must exist) whose frames are JPEG files passed through
/// untouched: libavformat's AVI muxer, which goes on past 1 GiB in OpenDML RIFF-AVIX chunks
/// (`indx` super index, `ix00` standard indexes, `dmlh`), so there is no 4 GiB limit.
cffm_status cffm_writer_open_mjpeg(const char *path, int32_t width, int32_t height, double frame_rate, cffm_writer **out,
                                   char *message, size_t message_size);

/// Appends one JPEG (a key frame) to a recording opened with `cffm_writer_open_mjpeg`.
// `slot`: the frame's place on the constant-rate timeline (frame index from the first); a gap
// after the last written frame is filled with empty chunks (dropped frames: the file keeps time).
cffm_status cffm_writer_write_packet(cffm_writer *writer, const uint8_t *data, int32_t size, int64_t slot, char *message,
                                     size_t message_size);
// The slots a pass-through recording spans so far (frames written and the gaps between).
int64_t cffm_writer_slots(const cffm_writer *writer);

/// Flushes the encoder (if any), writes the trailer (the AVI's indexes) and closes the file.
cffm_status cffm_writer_finish(cffm_writer *writer, char *message, size_t message_size);

/// The size the file would have if it were finished now (at least what is on disk): packets
/// wait in memory until their fragment is complete, so the file itself lags behind.
int64_t cffm_writer_bytes(const cffm_writer *writer);

/// A hard limit on the finished file's size (0: none): packets that would take it past the limit
/// are not written, nor any after them (those the encoder flushes at the end included), so a
/// recording stops at a decodable point, within the limit.
void cffm_writer_set_limit(cffm_writer *writer, int64_t max_bytes);

/// Whether the limit has held a packet back (the recording is at its end).
int cffm_writer_at_limit(const cffm_writer *writer);

/// The frames in the file (packets written): fewer than those given while the encoder holds
/// some, or when the limit cut the end.
int64_t cffm_writer_frames_written(const cffm_writer *writer);

/// Frees the writer (closing the file if `cffm_writer_finish` was not called).
void cffm_writer_free(cffm_writer *writer);

// MARK: Live (H.264 in fragmented MP4, in memory, for a browser's Media Source Extensions)

typedef struct cffm_live cffm_live;

typedef struct {
    int32_t width;
    int32_t height;
    double frame_rate;
    /// The most bits a second the stream may take (a cap over one second: quality is CRF 23
    /// below it).
    int32_t bitrate;
    /// Frames between key frames (0: one a second).
    int32_t keyframe_interval;
} cffm_live_settings;

/// A low-latency encoder (libx264 veryfast, zerolatency: no B-frames, no look-ahead, one
/// thread) and a fragmented-MP4 muxer writing into memory: an init segment, then one fragment a
/// frame.
cffm_status cffm_live_open(const cffm_live_settings *settings, cffm_live **out, char *message, size_t message_size);

/// The init segment (ftyp, moov with the stream's avcC): what a viewer appends first.
const uint8_t *cffm_live_init_segment(const cffm_live *live, size_t *size);

/// The stream's RFC 6381 codec string ("avc1.64001F"), for MediaSource.addSourceBuffer.
const char *cffm_live_codec(const cffm_live *live);

/// Encodes one frame presented at `pts` (1/CFFM_WRITER_TIMESCALE s, increasing); `force_key`
/// makes it a key frame (a viewer joined). `*fragment` (valid until the next call) is the
/// fragment it completed (moof + mdat), `*size` 0 if none; `*key` whether it starts with a key
/// frame (where a viewer may start).
cffm_status cffm_live_encode(cffm_live *live, const uint8_t *const planes[3], const int32_t strides[3], cffm_input_layout layout,
                             int64_t pts, int32_t force_key, const uint8_t **fragment, size_t *size, int32_t *key, char *message,
                             size_t message_size);

void cffm_live_close(cffm_live *live);

#ifdef __cplusplus
}
#endif

#endif
