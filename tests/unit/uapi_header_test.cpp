// ... and as C++ (libctl), with the same layout on both sides.
#include <gtest/gtest.h>

#include <cstddef>

#include "uapi/probectl.h"

extern "C" unsigned long probectl_uapi_c_record_size(void);
extern "C" unsigned long probectl_uapi_c_flags_offset(void);

TEST(UapiHeader, SameRecordLayoutInCAndCxx) {
    EXPECT_EQ(probectl_uapi_c_record_size(), sizeof(probectl_record));
    EXPECT_EQ(probectl_uapi_c_flags_offset(), offsetof(probectl_record, flags));
    EXPECT_EQ(sizeof(probectl_record) % 8, 0u);
}

// The fixed header is 32 bytes; the optional parts are flag bits apart from the return flag,
// each a multiple of 8 bytes so that the fetched values after them stay 8-byte aligned.
TEST(UapiHeader, FixedHeaderAndPartBits) {
    EXPECT_EQ(sizeof(probectl_record), 32u);
    EXPECT_EQ(offsetof(probectl_record, flags), 28u);
    const unsigned parts[] = {PROBECTL_RECORD_F_COMM, PROBECTL_RECORD_F_IP, PROBECTL_RECORD_F_ARGS,
                              PROBECTL_RECORD_F_RETVAL, PROBECTL_RECORD_F_LATENCY};
    unsigned seen = PROBECTL_RECORD_F_RETURN;
    for (unsigned p : parts) {
        EXPECT_EQ(p & (p - 1), 0u) << p;  // one bit each
        EXPECT_EQ(seen & p, 0u) << p;
        EXPECT_GT(p, seen) << "parts follow each other in bit order";
        seen |= p;
    }
    EXPECT_EQ(PROBECTL_COMM_LEN % 8, 0);
    EXPECT_GE(PROBECTL_GENL_VERSION, 2) << "the record layout changed in version 2";
}
