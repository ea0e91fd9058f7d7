/* Numbers of the kernel's ABI that the BPF programs need and vmlinux.h lacks (it carries types,
 * not #defines), named once for the BPF programs and user space alike: x86_64 system call
 * numbers, futex operations, task flags and states, socket and file-type constants. GT_-prefixed so that user space
 * can include it beside the system headers; bpf/threads.c and bpf/l7_probe.c assert each one
 * against <sys/syscall.h>, <linux/futex.h>, <sys/socket.h> and <sys/stat.h>. */
#ifndef GALATOP_BPF_KABI_H
#define GALATOP_BPF_KABI_H

/* x86_64 system calls the probes treat specially. */
#define GT_NR_READ 0
#define GT_NR_WRITE 1
#define GT_NR_OPEN 2
#define GT_NR_PREAD64 17
#define GT_NR_PWRITE64 18
#define GT_NR_READV 19
#define GT_NR_WRITEV 20
#define GT_NR_SENDFILE 40
#define GT_NR_SENDTO 44
#define GT_NR_RECVFROM 45
#define GT_NR_SENDMSG 46
#define GT_NR_RECVMSG 47
#define GT_NR_ACCEPT 43
#define GT_NR_CREAT 85
#define GT_NR_SYNC 162
#define GT_NR_FUTEX 202
#define GT_NR_OPENAT 257
#define GT_NR_ACCEPT4 288
#define GT_NR_RECVMMSG 299
#define GT_NR_SENDMMSG 307

/* futex(2) operations: the command is op & GT_FUTEX_CMD_MASK. */
#define GT_FUTEX_WAIT 0
#define GT_FUTEX_LOCK_PI 6
#define GT_FUTEX_WAIT_BITSET 9
#define GT_FUTEX_LOCK_PI2 13
#define GT_FUTEX_CMD_MASK 127 /* without FUTEX_PRIVATE_FLAG (128), FUTEX_CLOCK_REALTIME (256) */
#define GT_FUTEX_TID_MASK 0x3fffffff

/* task_struct flags and __state bits. */
#define GT_PF_KTHREAD 0x00200000
#define GT_TASK_RUNNING 0x0
#define GT_TASK_INTERRUPTIBLE 0x1
#define GT_TASK_UNINTERRUPTIBLE 0x2
#define GT_TASK_DEAD 0x80
#define GT_TASK_NOLOAD 0x400

#define GT_AF_UNIX 1
#define GT_AF_INET 2
#define GT_AF_INET6 10
#define GT_SOCK_STREAM 1
#define GT_SOCK_DGRAM 2
#define GT_MSG_PEEK 2
#define GT_IPPROTO_TCP 6
#define GT_IPPROTO_UDP 17
/* TCP states (include/net/tcp_states.h). */
#define GT_TCP_ESTABLISHED 1
#define GT_TCP_SYN_SENT 2
#define GT_TCP_SYN_RECV 3
#define GT_TCP_CLOSE 7
#define GT_EINPROGRESS 115
#define GT_ENOSYS 38 /* pt_regs->ax of a task inside a system call (set at entry) */
/* Super block magics of pseudo file systems (their files have no path). */
#define GT_PIPEFS_MAGIC 0x50495045
#define GT_ANON_INODE_FS_MAGIC 0x09041934
#define GT_S_IFMT 00170000
#define GT_S_IFSOCK 0140000

#endif
