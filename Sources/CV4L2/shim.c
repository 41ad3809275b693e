#include "CV4L2.h"
#include <libv4l2.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/mman.h>

int cv4l2_fd_open(int fd) { return v4l2_fd_open(fd, 0); }
int cv4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
int cv4l2_raw_ioctl(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
void *cv4l2_mmap(size_t length, int fd, int64_t offset) {
    return v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
}
int cv4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }
int cv4l2_close(int fd) { return v4l2_close(fd); }
void *cv4l2_map_failed(void) { return MAP_FAILED; }
int cv4l2_flock(int fd, int lock) { return flock(fd, lock ? LOCK_EX | LOCK_NB : LOCK_UN); }
