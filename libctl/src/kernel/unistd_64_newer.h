/*
 * x86-64 syscall numbers newer than Debian 12's <asm/unistd_64.h> (Linux 6.1), as the
 * kernel's arch/x86/entry/syscalls/syscall_64.tbl numbers them (up to 7.2). The built-in
 * syscall table reads the build host's header first and takes from here only the names it
 * lacks, so the ptrace backend knows the syscalls of the test kernels however old the
 * build host. Syscall numbers are ABI: they never change once released.
 */
#define __NR_uretprobe 335
#define __NR_uprobe 336
#define __NR_cachestat 451
#define __NR_fchmodat2 452
#define __NR_map_shadow_stack 453
#define __NR_futex_wake 454
#define __NR_futex_wait 455
#define __NR_futex_requeue 456
#define __NR_statmount 457
#define __NR_listmount 458
#define __NR_lsm_get_self_attr 459
#define __NR_lsm_set_self_attr 460
#define __NR_lsm_list_modules 461
#define __NR_mseal 462
#define __NR_setxattrat 463
#define __NR_getxattrat 464
#define __NR_listxattrat 465
#define __NR_removexattrat 466
#define __NR_open_tree_attr 467
#define __NR_file_getattr 468
#define __NR_file_setattr 469
#define __NR_listns 470
#define __NR_rseq_slice_yield 471
