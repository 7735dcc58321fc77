// The public headers spell the protocol's numbers out so that they need not include the
// kernel's uapi header (an embedding program gets libprobectl's API, not the wire format).
// This file is where each of those numbers is held to the uapi header at compile time.
#include <cstddef>

#include "probectl/aggr_map.hpp"
#include "probectl/client.hpp"
#include "probectl/fetch_program.hpp"
#include "probectl/fetch_spec.hpp"
#include "probectl/predicate.hpp"
#include "uapi/probectl.h"

namespace probectl {

static_assert(static_cast<int>(ProbeKind::Kprobe) == PROBECTL_KIND_KPROBE);
static_assert(static_cast<int>(ProbeKind::Kretprobe) == PROBECTL_KIND_KRETPROBE);
static_assert(static_cast<int>(ProbeKind::Uprobe) == PROBECTL_KIND_UPROBE);
static_assert(static_cast<int>(ProbeKind::Uretprobe) == PROBECTL_KIND_URETPROBE);
static_assert(static_cast<int>(ProbeKind::Tracepoint) == PROBECTL_KIND_TRACEPOINT);
static_assert(kProbeFlagPersistent == PROBECTL_PROBE_F_PERSISTENT);
static_assert(kProbeFlagSyscall == PROBECTL_PROBE_F_SYSCALL);
static_assert(kProbeFlagEnabled == PROBECTL_PROBE_F_ENABLED);
static_assert(kProbeFlagSyscallSpec == PROBECTL_PROBE_F_SYSCALL_SPEC);

static_assert(static_cast<int>(FetchOpcode::LoadArg) == PROBECTL_FETCH_LOAD_ARG);
static_assert(static_cast<int>(FetchOpcode::LoadReg) == PROBECTL_FETCH_LOAD_REG);
static_assert(static_cast<int>(FetchOpcode::LoadStack) == PROBECTL_FETCH_LOAD_STACK);
static_assert(static_cast<int>(FetchOpcode::LoadRetval) == PROBECTL_FETCH_LOAD_RETVAL);
static_assert(static_cast<int>(FetchOpcode::LoadPid) == PROBECTL_FETCH_LOAD_PID);
static_assert(static_cast<int>(FetchOpcode::LoadTid) == PROBECTL_FETCH_LOAD_TID);
static_assert(static_cast<int>(FetchOpcode::LoadUid) == PROBECTL_FETCH_LOAD_UID);
static_assert(static_cast<int>(FetchOpcode::LoadCpu) == PROBECTL_FETCH_LOAD_CPU);
static_assert(static_cast<int>(FetchOpcode::LoadImm) == PROBECTL_FETCH_LOAD_IMM);
static_assert(static_cast<int>(FetchOpcode::Deref) == PROBECTL_FETCH_DEREF);
static_assert(static_cast<int>(FetchOpcode::StoreInt) == PROBECTL_FETCH_STORE_INT);
static_assert(static_cast<int>(FetchOpcode::StoreString) == PROBECTL_FETCH_STORE_STRING);
static_assert(static_cast<int>(FetchOpcode::StoreArray) == PROBECTL_FETCH_STORE_ARRAY);
static_assert(static_cast<int>(FetchOpcode::StoreComm) == PROBECTL_FETCH_STORE_COMM);
static_assert(static_cast<int>(FetchOpcode::LoadKstack) == PROBECTL_FETCH_LOAD_KSTACK);
static_assert(static_cast<int>(FetchOpcode::LoadUstack) == PROBECTL_FETCH_LOAD_USTACK);
static_assert(static_cast<int>(FetchOpcode::StoreUstackSnapshot) ==
              PROBECTL_FETCH_STORE_USTACK_SNAPSHOT);
static_assert(static_cast<int>(FetchOpcode::LoadExec) == PROBECTL_FETCH_LOAD_EXEC);
static_assert(static_cast<int>(FetchOpcode::LoadAddr) == PROBECTL_FETCH_LOAD_ADDR);
static_assert(static_cast<int>(FetchOpcode::LoadAddr) + 1 == __PROBECTL_FETCH_OP_MAX);
static_assert(kFetchAddrNoBase == PROBECTL_FETCH_ADDR_NO_BASE);
static_assert(kUstackSnapshotMax == PROBECTL_USTACK_SNAPSHOT_MAX);
static_assert(kUstackSnapshotDefault == PROBECTL_USTACK_SNAPSHOT_DEFAULT);
static_assert(kUstackRegsBytes == sizeof(struct probectl_ustack_regs));
static_assert(offsetof(struct probectl_ustack_regs, ip) == 16 * 8);
static_assert(kFetchFlagFuncEntry == PROBECTL_FETCH_F_FUNC_ENTRY);
static_assert(kStackMaxDepth == PROBECTL_STACK_MAX_DEPTH);
static_assert(kStackDefaultDepth == PROBECTL_STACK_DEFAULT_DEPTH);
static_assert(kMmPinSlots == PROBECTL_MM_PIN_SLOTS);
static_assert(kMmPinAgain == PROBECTL_MM_PIN_AGAIN);
static_assert(kFetchFlagUser == PROBECTL_FETCH_F_USER);
static_assert(kFetchFlagErrno == PROBECTL_FETCH_F_ERRNO);
static_assert(sizeof(FetchInsn) == sizeof(probectl_fetch_insn));
static_assert(offsetof(FetchInsn, offset) == offsetof(probectl_fetch_insn, offset));
static_assert(offsetof(FetchInsn, operand) == offsetof(probectl_fetch_insn, operand));
static_assert(kFetchMaxInsns == PROBECTL_FETCH_MAX_INSNS);

static_assert(kFetchMaxArgs == PROBECTL_FETCH_MAX_ARGS);
static_assert(kFetchMaxDepth == PROBECTL_FETCH_MAX_DEPTH);
static_assert(kFetchMaxArray == PROBECTL_FETCH_MAX_ARRAY);
static_assert(kFetchMaxArgN == PROBECTL_NARGS);
static_assert(kFetchMaxStackN == PROBECTL_FETCH_MAX_STACK);

static_assert(sizeof(FilterInsn) == sizeof(probectl_filter_insn));
static_assert(offsetof(FilterInsn, arg_index) == offsetof(probectl_filter_insn, arg));
static_assert(offsetof(FilterInsn, width) == offsetof(probectl_filter_insn, width));
static_assert(offsetof(FilterInsn, value) == offsetof(probectl_filter_insn, value));
static_assert(static_cast<int>(PredicateOpcode::Test) == PROBECTL_FILTER_TEST &&
              static_cast<int>(PredicateOpcode::Not) == PROBECTL_FILTER_NOT);
static_assert(static_cast<int>(PredicateCmp::Glob) == PROBECTL_FILTER_GLOB &&
              static_cast<int>(PredicateCmp::Mask) == PROBECTL_FILTER_MASK);
static_assert(static_cast<int>(PredicateFieldKind::Uid) == PROBECTL_FILTER_FIELD_UID &&
              static_cast<int>(PredicateFieldKind::Comm) == PROBECTL_FILTER_FIELD_COMM &&
              static_cast<int>(PredicateFieldKind::Retval) == PROBECTL_FILTER_FIELD_RETVAL);
static_assert(kFilterFlagSigned == PROBECTL_FILTER_F_SIGNED &&
              kFilterFlagString == PROBECTL_FILTER_F_STRING);
static_assert(kFilterMaxInsns == PROBECTL_FILTER_MAX_INSNS);
static_assert(kFilterMaxStack == PROBECTL_FILTER_MAX_STACK);
static_assert(kFilterMaxStrings == PROBECTL_FILTER_MAX_STRINGS);
static_assert(kFilterMaxStringLen == PROBECTL_FILTER_MAX_STRLEN);

static_assert(kAggrMaxKeys == PROBECTL_AGGR_MAX_KEYS);
static_assert(kAggrStrLen == PROBECTL_AGGR_STR_LEN);
static_assert(kAggrDefaultEntries == PROBECTL_AGGR_DEFAULT_ENTRIES);
static_assert(kAggrMaxEntries == PROBECTL_AGGR_MAX_ENTRIES);
static_assert(kAggrLog2Buckets == PROBECTL_AGGR_LOG2_BUCKETS);
static_assert(kAggrMaxLinear == PROBECTL_AGGR_MAX_LINEAR);
static_assert(kAggrFlagSigned == PROBECTL_AGGR_F_SIGNED);
static_assert(static_cast<int>(AggrValue::Arg) == PROBECTL_AGGR_V_ARG &&
              static_cast<int>(AggrValue::Latency) == PROBECTL_AGGR_V_LATENCY);
static_assert(static_cast<int>(AggrHist::Log2) == PROBECTL_AGGR_H_LOG2 &&
              static_cast<int>(AggrHist::Linear) == PROBECTL_AGGR_H_LINEAR);
static_assert(sizeof(AggrMapSpec) == sizeof(probectl_aggr_spec));
static_assert(offsetof(AggrMapSpec, nkeys) == offsetof(probectl_aggr_spec, nkeys));
static_assert(offsetof(AggrMapSpec, keys) == offsetof(probectl_aggr_spec, keys));
static_assert(offsetof(AggrMapSpec, value) == offsetof(probectl_aggr_spec, value));
static_assert(offsetof(AggrMapSpec, value_arg) == offsetof(probectl_aggr_spec, value_arg));
static_assert(offsetof(AggrMapSpec, hist) == offsetof(probectl_aggr_spec, hist));
static_assert(offsetof(AggrMapSpec, flags) == offsetof(probectl_aggr_spec, flags));
static_assert(offsetof(AggrMapSpec, lin_min) == offsetof(probectl_aggr_spec, lin_min));
static_assert(offsetof(AggrMapSpec, lin_step) == offsetof(probectl_aggr_spec, lin_step));
static_assert(sizeof(AggrTotals) == sizeof(probectl_aggr_value));
static_assert(offsetof(AggrTotals, max) == offsetof(probectl_aggr_value, max));

}  // namespace probectl
