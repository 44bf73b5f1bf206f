// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for (Accept:
// application/json;as=Table;v=v1;g=meta.k8s.io), with the columns the real server prints for
// each kind. Rows carry the object's metadata as PartialObjectMetadata, as includeObject=Metadata.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <string>
#include <vector>

namespace iogate::apiserver {

// True when an Accept header asks for a Table.
bool wants_table(const std::string& accept);

nlohmann::json make_table(const std::string& kind, const std::vector<nlohmann::json>& objects,
                          const std::string& list_resource_version, std::time_t now);

// kubectl's duration.HumanDuration: "45s", "3m20s", "5h", "12d".
std::string human_duration(long long seconds);

}  // namespace iogate::apiserver
