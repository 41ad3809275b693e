// CV4L2: the parts of linux/videodev2.h and libv4l2 that Swift cannot import as they are.
// Function-like macros (VIDIOC_*, v4l2_fourcc) become constants; variadic functions
// (v4l2_ioctl) become fixed-argument wrappers. Every symbol is prefixed `cv4l2_`.
#ifndef CV4L2_H
#define CV4L2_H

#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: ioctl request codes (_IOR/_IOWR macros do not import)
static const unsigned long cv4l2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long cv4l2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long cv4l2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long cv4l2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long cv4l2_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long cv4l2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long cv4l2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long cv4l2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long cv4l2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long cv4l2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long cv4l2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long cv4l2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long cv4l2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long cv4l2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long cv4l2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long cv4l2_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;
static const unsigned long cv4l2_VIDIOC_S_INPUT = VIDIOC_S_INPUT;
static const unsigned long cv4l2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long cv4l2_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long cv4l2_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long cv4l2_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
static const unsigned long cv4l2_VIDIOC_SUBSCRIBE_EVENT = VIDIOC_SUBSCRIBE_EVENT;
static const unsigned long cv4l2_VIDIOC_UNSUBSCRIBE_EVENT = VIDIOC_UNSUBSCRIBE_EVENT;
static const unsigned long cv4l2_VIDIOC_DQEVENT = VIDIOC_DQEVENT;

// MARK: controls (the CIDs are sums of class bases, which import unreliably)
static const uint32_t cv4l2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const uint32_t cv4l2_CTRL_FLAG_NEXT_COMPOUND = V4L2_CTRL_FLAG_NEXT_COMPOUND;
static const uint32_t cv4l2_CTRL_ID_MASK = V4L2_CTRL_ID_MASK;
static const uint32_t cv4l2_CID_BRIGHTNESS = V4L2_CID_BRIGHTNESS;
static const uint32_t cv4l2_CID_CONTRAST = V4L2_CID_CONTRAST;
static const uint32_t cv4l2_CID_SATURATION = V4L2_CID_SATURATION;
static const uint32_t cv4l2_CID_HUE = V4L2_CID_HUE;
static const uint32_t cv4l2_CID_AUTO_WHITE_BALANCE = V4L2_CID_AUTO_WHITE_BALANCE;
static const uint32_t cv4l2_CID_DO_WHITE_BALANCE = V4L2_CID_DO_WHITE_BALANCE;
static const uint32_t cv4l2_CID_WHITE_BALANCE_TEMPERATURE = V4L2_CID_WHITE_BALANCE_TEMPERATURE;
static const uint32_t cv4l2_CID_AUTOGAIN = V4L2_CID_AUTOGAIN;
static const uint32_t cv4l2_CID_GAIN = V4L2_CID_GAIN;
static const uint32_t cv4l2_CID_EXPOSURE_AUTO = V4L2_CID_EXPOSURE_AUTO;
static const uint32_t cv4l2_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
static const uint32_t cv4l2_CID_ISO_SENSITIVITY = V4L2_CID_ISO_SENSITIVITY;
static const uint32_t cv4l2_CID_FOCUS_ABSOLUTE = V4L2_CID_FOCUS_ABSOLUTE;
static const uint32_t cv4l2_CID_FOCUS_AUTO = V4L2_CID_FOCUS_AUTO;
static const uint32_t cv4l2_CID_AUTO_FOCUS_START = V4L2_CID_AUTO_FOCUS_START;
static const uint32_t cv4l2_CID_ZOOM_ABSOLUTE = V4L2_CID_ZOOM_ABSOLUTE;
static const uint32_t cv4l2_CID_FLASH_LED_MODE = V4L2_CID_FLASH_LED_MODE;
static const uint32_t cv4l2_CID_FLASH_STROBE = V4L2_CID_FLASH_STROBE;
static const uint32_t cv4l2_EXPOSURE_AUTO = V4L2_EXPOSURE_AUTO;
static const uint32_t cv4l2_EXPOSURE_MANUAL = V4L2_EXPOSURE_MANUAL;
static const uint32_t cv4l2_EXPOSURE_SHUTTER_PRIORITY = V4L2_EXPOSURE_SHUTTER_PRIORITY;
static const uint32_t cv4l2_EXPOSURE_APERTURE_PRIORITY = V4L2_EXPOSURE_APERTURE_PRIORITY;
static const uint32_t cv4l2_FLASH_LED_MODE_NONE = V4L2_FLASH_LED_MODE_NONE;
static const uint32_t cv4l2_FLASH_LED_MODE_FLASH = V4L2_FLASH_LED_MODE_FLASH;
static const uint32_t cv4l2_EVENT_CTRL = V4L2_EVENT_CTRL;
static const uint32_t cv4l2_EVENT_CTRL_CH_VALUE = V4L2_EVENT_CTRL_CH_VALUE;
static const uint32_t cv4l2_EVENT_CTRL_CH_FLAGS = V4L2_EVENT_CTRL_CH_FLAGS;
static const uint32_t cv4l2_EVENT_CTRL_CH_RANGE = V4L2_EVENT_CTRL_CH_RANGE;

// MARK: pixel formats (v4l2_fourcc is a function-like macro)
static const uint32_t cv4l2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t cv4l2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const uint32_t cv4l2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
static const uint32_t cv4l2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t cv4l2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const uint32_t cv4l2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;
static const uint32_t cv4l2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
// 32BGRA (B,G,R,A in memory) is ABGR32/XBGR32 in V4L2; V4L2_PIX_FMT_BGRA32 is another byte order.
static const uint32_t cv4l2_PIX_FMT_ABGR32 = V4L2_PIX_FMT_ABGR32;
static const uint32_t cv4l2_PIX_FMT_XBGR32 = V4L2_PIX_FMT_XBGR32;

// The kernel ABI these wrappers rely on (x86-64 / arm64 layouts).
_Static_assert(sizeof(struct v4l2_buffer) == 88, "v4l2_buffer layout");
_Static_assert(sizeof(struct v4l2_format) == 208, "v4l2_format layout");
_Static_assert(sizeof(struct v4l2_ext_control) == 20, "v4l2_ext_control layout (packed)");
_Static_assert(sizeof(struct v4l2_querymenu) == 44, "v4l2_querymenu layout (packed)");

// MARK: packed structs, as bytes
// Swift cannot lay out `__attribute__((packed))` records (v4l2_ext_control, v4l2_querymenu),
// so FrameKit keeps them in byte buffers of these sizes and reads and writes them here.
static const size_t cv4l2_EXT_CONTROL_SIZE = sizeof(struct v4l2_ext_control);
static const size_t cv4l2_EXT_CONTROLS_SIZE = sizeof(struct v4l2_ext_controls);
static const size_t cv4l2_QUERYMENU_SIZE = sizeof(struct v4l2_querymenu);

/// A G/S_EXT_CTRLS request for `count` controls at `controls` (current values).
static inline void cv4l2_ext_controls_init(void *request, uint32_t count, void *controls) {
    struct v4l2_ext_controls *r = (struct v4l2_ext_controls *)request;
    *r = (struct v4l2_ext_controls){0};
    r->which = V4L2_CTRL_WHICH_CUR_VAL;
    r->count = count;
    r->controls = (struct v4l2_ext_control *)controls;
}
static inline uint32_t cv4l2_ext_controls_count(const void *request) {
    return ((const struct v4l2_ext_controls *)request)->count;
}
static inline void *cv4l2_ext_controls_controls(const void *request) {
    return ((const struct v4l2_ext_controls *)request)->controls;
}
static inline void cv4l2_ext_control_init(void *control, uint32_t id, int64_t value, int is64) {
    struct v4l2_ext_control *c = (struct v4l2_ext_control *)control;
    *c = (struct v4l2_ext_control){0};
    c->id = id;
    if (is64) { c->value64 = value; } else { c->value = (int32_t)value; }
}
static inline uint32_t cv4l2_ext_control_id(const void *control) { return ((const struct v4l2_ext_control *)control)->id; }
static inline int64_t cv4l2_ext_control_value(const void *control, int is64) {
    const struct v4l2_ext_control *c = (const struct v4l2_ext_control *)control;
    return is64 ? c->value64 : (int64_t)c->value;
}
static inline void cv4l2_ext_control_set_value(void *control, int64_t value, int is64) {
    struct v4l2_ext_control *c = (struct v4l2_ext_control *)control;
    if (is64) { c->value64 = value; } else { c->value = (int32_t)value; }
}
static inline void cv4l2_querymenu_init(void *menu, uint32_t id, uint32_t index) {
    struct v4l2_querymenu *m = (struct v4l2_querymenu *)menu;
    *m = (struct v4l2_querymenu){0};
    m->id = id;
    m->index = index;
}
static inline uint32_t cv4l2_querymenu_id(const void *menu) { return ((const struct v4l2_querymenu *)menu)->id; }
static inline uint32_t cv4l2_querymenu_index(const void *menu) { return ((const struct v4l2_querymenu *)menu)->index; }
/// A menu item's name into `name` (32 bytes, always NUL-terminated).
static inline void cv4l2_querymenu_name(const void *menu, char *name) {
    const struct v4l2_querymenu *m = (const struct v4l2_querymenu *)menu;
    for (int i = 0; i < 31; i++) name[i] = (char)m->name[i];
    name[31] = 0;
}
/// An integer menu item's value.
static inline int64_t cv4l2_querymenu_value(const void *menu) { return ((const struct v4l2_querymenu *)menu)->value; }
/// Answers a QUERYMENU as a driver would: a name, or (name NULL) an integer value. For tests.
static inline void cv4l2_querymenu_answer(void *menu, const char *name, int64_t value) {
    struct v4l2_querymenu *m = (struct v4l2_querymenu *)menu;
    if (name) {
        int i = 0;
        for (; i < 31 && name[i]; i++) m->name[i] = (uint8_t)name[i];
        for (; i < 32; i++) m->name[i] = 0;
    } else {
        m->value = value;
    }
}

// MARK: libv4l2 (its ioctl is variadic, which Swift cannot call)

/// Hands an already-open descriptor to libv4l2 (format emulation for odd camera formats).
/// Returns the descriptor, or -1 with errno set.
int cv4l2_fd_open(int fd);
/// `v4l2_ioctl(fd, request, arg)`; -1 with errno set on failure.
int cv4l2_ioctl(int fd, unsigned long request, void *arg);
/// Plain `ioctl(2)`, bypassing libv4l2: used to probe a node before libv4l2 sees it, so a
/// non-camera path fails with our error rather than libv4l2's message on stderr.
int cv4l2_raw_ioctl(int fd, unsigned long request, void *arg);
void *cv4l2_mmap(size_t length, int fd, int64_t offset);
int cv4l2_munmap(void *start, size_t length);
int cv4l2_close(int fd);
/// `flock(fd, LOCK_EX | LOCK_NB)` when `lock`, else `flock(fd, LOCK_UN)` (Swift sees `flock`
/// as the struct of the same name).
int cv4l2_flock(int fd, int lock);
/// MAP_FAILED, which Swift sees only as a macro.
void *cv4l2_map_failed(void);

#ifdef __cplusplus
}
#endif
#endif
