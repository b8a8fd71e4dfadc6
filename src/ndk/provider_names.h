// SPDX-License-Identifier: Apache-2.0
// ndk/provider_names.h - the provider interface's shared types under the
// names the object model has always used for them (ndk::WorkRequest,
// ndk::StagTable, ndk::Counters, ...). The types themselves live below the
// object model, in src/provider/, so that an engine can use them without
// including anything from src/ndk (docs/architecture.md).
#pragma once

#include "provider/provider.h"

namespace softndk::ndk {

using provider::add_data_path;
using provider::count2;
using provider::count_qp;
using provider::Counters;

using provider::kMaxSge;
using provider::ReceiveHead;
using provider::ReceiveRequest;
using provider::WorkRequest;
using provider::WorkRequestHead;

using provider::Access;
using provider::access_from_mr_flags;
using provider::access_from_op_flags;
using provider::kAccessLocalRead;
using provider::kAccessLocalWrite;
using provider::kAccessReadSink;
using provider::kAccessRemoteRead;
using provider::kAccessRemoteWrite;
using provider::StagInfo;
using provider::StagKind;
using provider::StagTable;

using provider::fault_type;
using provider::kDirectNoSlot;
using provider::ProgressSource;
using provider::QpState;
using QpTransport = provider::QpEngine;

}  // namespace softndk::ndk
