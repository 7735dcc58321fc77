#include "site_fetch.hpp"

#include <cstring>

#include "memory.hpp"
#include "probectl/fetch_decode.hpp"
#include "uapi/probectl.h"

namespace probectl::ptrace {

bool siteFetchSupported(const std::vector<FetchInsn>& insns) {
    for (const FetchInsn& in : insns) {
        switch (static_cast<FetchOpcode>(in.op)) {
            case FetchOpcode::LoadReg:
            case FetchOpcode::LoadImm:
            case FetchOpcode::LoadAddr:
            case FetchOpcode::StoreInt:
                break;
            case FetchOpcode::Deref:
                if (!(in.flags & kFetchFlagUser))
                    return false;
                break;
            default:
                return false;
        }
    }
    return true;
}

std::vector<Event::RawValue> runSiteFetch(pid_t tid, const user_regs_struct& regs,
                                          const std::vector<FetchInsn>& insns) {
    // struct pt_regs and user_regs_struct share their first words' order (r15 .. ss), the
    // order load-reg's operand counts in.
    constexpr std::size_t kWords = sizeof(user_regs_struct) / sizeof(std::uint64_t);
    std::uint64_t words[kWords];
    std::memcpy(words, &regs, sizeof(words));
    std::vector<Event::RawValue> out;
    std::uint64_t acc = 0;
    int fault = 0;
    for (const FetchInsn& in : insns) {
        switch (static_cast<FetchOpcode>(in.op)) {
            case FetchOpcode::LoadReg:
                acc = in.operand < kWords ? words[in.operand] : 0;
                if (in.size == 4)
                    acc &= 0xffffffffu;
                break;
            case FetchOpcode::LoadImm:
                acc = in.operand | static_cast<std::uint64_t>(static_cast<std::uint32_t>(in.offset))
                                       << 32;
                break;
            case FetchOpcode::LoadAddr: {
                // base + index * scale, as kmod/fetch.c computes it (the sum wraps)
                const unsigned base = in.operand & 0xff, index = (in.operand >> 8) & 0xff;
                acc = (index < kWords ? words[index] : 0) * in.size;
                if (base != kFetchAddrNoBase)
                    acc += base < kWords ? words[base] : 0;
                break;
            }
            case FetchOpcode::Deref: {
                std::uint64_t v = 0;
                if (!fault) {
                    auto r = readRemote(tid, acc + static_cast<std::int64_t>(in.offset), &v,
                                        in.size <= 8 ? in.size : 8);
                    if (!r)
                        fault = r.error().err ? r.error().err : EFAULT;
                }
                acc = v;
                break;
            }
            case FetchOpcode::StoreInt: {
                Event::RawValue rv;
                if (fault) {
                    rv.flags = PROBECTL_FETCH_V_FAULT;
                    rv.error = fault;
                } else {
                    const std::size_t n = in.size <= 8 ? in.size : 8;
                    for (std::size_t i = 0; i < n; i++)
                        rv.bytes.push_back(static_cast<std::uint8_t>(acc >> (8 * i)));
                }
                out.push_back(std::move(rv));
                acc = 0;
                fault = 0;
                break;
            }
            default:
                break;  // refused when the probe was added (siteFetchSupported)
        }
    }
    return out;
}

void fillSiteValues(Event& ev, pid_t tid, const user_regs_struct& regs,
                    const std::vector<FetchInsn>& insns, const std::vector<FetchArg>& args) {
    ev.fetched = runSiteFetch(tid, regs, insns);
    for (std::size_t i = 0; i < ev.fetched.size() && i < args.size(); i++)
        ev.values.push_back(decodeFetchedValue(args[i], ev.fetched[i].bytes, ev.fetched[i].flags));
}

}  // namespace probectl::ptrace
