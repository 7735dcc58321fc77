/* The uapi header must compile alone as C (the kernel side) ... */
#include "uapi/probectl.h"

unsigned long probectl_uapi_c_record_size(void)
{
	return sizeof(struct probectl_record);
}

unsigned long probectl_uapi_c_flags_offset(void)
{
	return __builtin_offsetof(struct probectl_record, flags);
}
