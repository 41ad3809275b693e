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
/// MAP_FAILED, which Swift sees only as a macro.
void *cv4l2_map_failed(void);

#ifdef __cplusplus
}
#endif
#endif
