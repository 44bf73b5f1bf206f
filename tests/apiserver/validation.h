// The API server's validation for the fields this subset stores, with k8s.io/apimachinery's
// wording: label keys and values, annotation keys and total size (256 KiB), object names, node
// taints, and Events (core/v1 leniently, events.k8s.io/v1 strictly, as ValidateEventCreate does).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "api_status.h"

namespace iogate::apiserver {

inline constexpr size_t kTotalAnnotationSizeLimitBytes = 256 * 1024;

// Empty when valid: the causes a 422 Invalid Status lists.
std::vector<FieldCause> validate_qualified_name(const std::string& value, const std::string& field);
std::vector<FieldCause> validate_label_value(const std::string& value, const std::string& field);
std::vector<FieldCause> validate_dns_subdomain(const std::string& value, const std::string& field);

// metadata: name (on create), labels, annotations. Applies to every kind.
std::vector<FieldCause> validate_object_meta(const nlohmann::json& object, bool creating);

// Kind-specific rules: Node spec.taints; Event required fields. `events_v1` is true when the Event
// came through events.k8s.io/v1 (strict), false for core/v1 (legacy rules). Field names in the
// causes are those of core/v1 (the stored form), as the real server reports them.
std::vector<FieldCause> validate_node(const nlohmann::json& node);
std::vector<FieldCause> validate_event_create(const nlohmann::json& core_event, bool events_v1);

}  // namespace iogate::apiserver
