// Kubernetes' syntax for label keys and values, checked where a policy names labels (a rule's
// selector.pod_labels, metadata.labels and metadata.annotations): a selector the API server could
// never match is a typo to report, and a label value of megabytes is a policy to refuse, not to
// copy into every rule. The rules are apimachinery's (k8s.io/apimachinery/pkg/util/validation):
// IsQualifiedName for keys, IsValidLabelValue for values, the annotations' total size.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/result.h"

namespace iogate {

inline constexpr size_t kLabelNameMax = 63;           // a key's name part, and a value
inline constexpr size_t kLabelPrefixMax = 253;        // a key's prefix, a DNS subdomain
inline constexpr size_t kAnnotationsMax = 256 << 10;  // all of an object's annotation keys and values

// A key: [prefix/]name; the name at most 63 characters of letters, digits, '-', '_' and '.',
// starting and ending with a letter or digit; the prefix a lower-case DNS subdomain of at most 253.
// Annotation keys are checked lower-cased, as the API server does. `path` names the key in errors.
Status check_label_key(std::string_view key, const std::string& path);
Status check_annotation_key(std::string_view key, const std::string& path);

// A value: empty, or at most 63 characters of letters, digits, '-', '_' and '.', starting and
// ending with a letter or digit.
Status check_label_value(std::string_view value, const std::string& path);

}  // namespace iogate
