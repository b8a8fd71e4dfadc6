// SPDX-License-Identifier: Apache-2.0
// report.h - what ndk-nvme prints: fio's vocabulary (IOPS, BW, clat
// percentiles) as text, and the same figures as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "controller.h"
#include "io_engine.h"

namespace nvmf::host {

std::string job_text(const JobSpec& spec, const JobResult& r);
nlohmann::json job_json(const JobSpec& spec, const JobResult& r);

std::string identify_text(const ControllerInfo& c, const std::vector<NamespaceInfo>& ns);
nlohmann::json identify_json(const ControllerInfo& c, const std::vector<NamespaceInfo>& ns);

// The discovery log page (header + entries) as text or JSON.
std::string discovery_text(const std::vector<uint8_t>& log);
nlohmann::json discovery_json(const std::vector<uint8_t>& log);

}  // namespace nvmf::host
