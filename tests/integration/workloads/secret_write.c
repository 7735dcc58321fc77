// Writes from memory only the process itself may read: a memfd_secret(2) page, which
// process_vm_readv and /proc/PID/mem cannot reach (GUP refuses it) but the kernel copies
// from for the process's own write(2). Exits 77 when the kernel has no secret memory.
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	long fd = syscall(SYS_memfd_secret, 0);
	char *p;

	if (fd < 0 || ftruncate((int)fd, 4096))
		return 77;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (p == MAP_FAILED)
		return 77;
	memcpy(p, "secret\n", 7);
	return write(1, p, 7) == 7 ? 0 : 1;
}
