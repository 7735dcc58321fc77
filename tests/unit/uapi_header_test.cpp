// ... and as C++ (libctl), with the same layout on both sides.
#include <gtest/gtest.h>

#include <cstddef>

#include "uapi/probectl.h"

extern "C" unsigned long probectl_uapi_c_record_size(void);
extern "C" unsigned long probectl_uapi_c_comm_offset(void);

TEST(UapiHeader, SameRecordLayoutInCAndCxx) {
    EXPECT_EQ(probectl_uapi_c_record_size(), sizeof(probectl_record));
    EXPECT_EQ(probectl_uapi_c_comm_offset(), offsetof(probectl_record, comm));
    EXPECT_EQ(sizeof(probectl_record) % 8, 0u);
}
