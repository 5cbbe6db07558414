/* SPDX-License-Identifier: MIT */
/* pprof_pb.h: short names for protoc-c's profile.proto types (reader and writer). */
#ifndef MEMTRACE_PPROF_PB_H
#define MEMTRACE_PPROF_PB_H

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

#endif
