// detect_storage_stack on fake sysfs/procfs trees laid out as real kernels lay them out
// (tests/fixtures/sysfs/cases/*.sh): mount, class, reason, stack shape and slowest leaf per layout,
// checked on the JSON that `iogate detect --output-format json` prints (detect_report_to_json).
// One table (kRows) holds every detection the tests make: a row per fixture and path, with its class,
// its reason and the checks particular to it; a fixture under cases/ without a row fails, as does a
// row without a fixture. Each tree is built by its own builder, `bash cases/NAME.sh DIR`, once, when
// a row first needs it; the fixtures stay the one source of the trees. The CLI's own part (its
// human format, exit status) is tests/integration/test_detect_fixtures.sh.
#include "device/storage_stack.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/storage_report.h"
#include "source_tree.h"
#include "temp_tree.h"

extern char** environ;

using namespace iogate;
using nlohmann::json;
using namespace nlohmann::literals;

namespace {

namespace fs = std::filesystem;

std::string cases_dir() { return iogate::testing::source_path("tests/fixtures/sysfs/cases").string(); }

std::string tail_of(const std::string& file, size_t bytes) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  return text.size() > bytes ? "…" + text.substr(text.size() - bytes) : text;
}

// The fixture trees under one scratch directory, removed at exit; each built once, when a test
// first asks for it (about half a second of bash each).
class FixtureTrees {
 public:
  static FixtureTrees& get() {
    static FixtureTrees trees;
    return trees;
  }

  // The root of fixture `name`, or "" with `error` saying why its builder failed.
  std::string tree(const std::string& name, std::string& error) {
    auto [it, first] = errors_.try_emplace(name);
    if (first) it->second = build(name);
    error = it->second;
    return error.empty() ? scratch_.path(name) : "";
  }

 private:
  // bash cases/NAME.sh DIR, its output in DIR.log; "" when it succeeded, else why not.
  std::string build(const std::string& name) {
    if (scratch_.root.empty()) return "no scratch directory under /tmp";
    std::string script = cases_dir() + "/" + name + ".sh";
    std::string dir = scratch_.path(name), log = scratch_.path(name + ".log");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> args = {"bash", script, dir};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, "bash", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return "bash " + script + " " + dir + ": cannot start bash: " + std::strerror(rc);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    std::string why = WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status))
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
    return "bash " + script + " " + dir + " " + why + ": " + tail_of(log, 400);
  }

  testing::TempTree scratch_;
  std::map<std::string, std::string> errors_;  // by fixture: "" once built
};

struct Fixture {
  std::string name, root;
};

// The tree of fixture `name`; an empty root, the failure recorded, when it does not build.
Fixture fixture(const std::string& name) {
  std::string error;
  std::string root = FixtureTrees::get().tree(name, error);
  CHECK_MESSAGE(error.empty(), name << ": the fixture does not build: " << error);
  return {name, root};
}

// ---- the jq of the former shell test, on nlohmann::json ------------------------------------------

// The value of an expression, or none where jq would give no value at all (node() of a name that is
// not in the stack, an index into a non-object).
using Got = std::optional<json>;

std::string show(const Got& g) { return g ? g->dump() : "nothing"; }

// jq `.a.b` as the JSON pointer "/a/b": null where the path leads nowhere (as jq on objects and null).
Got at(const Got& g, const std::string& pointer) {
  if (!g) return std::nullopt;
  try {
    json::json_pointer p(pointer);
    return g->contains(p) ? g->at(p) : json();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// jq `[.a, .b, ...]` on one value.
Got fields(const Got& g, std::initializer_list<const char*> keys) {
  if (!g || !g->is_object()) return std::nullopt;
  json out = json::array();
  for (const char* k : keys) out.push_back(g->value(k, json()));
  return out;
}

// jq `[x, y, ...]` of several expressions: none if any of them is none.
Got array(std::initializer_list<Got> items) {
  json out = json::array();
  for (const Got& g : items) {
    if (!g) return std::nullopt;
    out.push_back(*g);
  }
  return out;
}

Got length(const Got& g) {
  if (!g || !(g->is_array() || g->is_object() || g->is_string())) return std::nullopt;
  return g->is_string() ? g->get<std::string>().size() : g->size();
}

// jq: (sort | join(",")) of strings.
std::string sorted_join(std::vector<std::string> parts) {
  std::sort(parts.begin(), parts.end());
  std::string joined;
  for (const std::string& p : parts) joined += (joined.empty() ? "" : ",") + p;
  return joined;
}

// jq: def shape: (if .kind == "file" then "(file)" else "\(.name)(\(.kind))" end)
//   + (if ((.children // []) | length) > 0 then "[" + ([.children[] | shape] | sort | join(",")) + "]" else "" end);
// A stack as text, children sorted by name so sysfs directory order does not matter; a file node
// (a loop's backing file) prints as "(file)" since its name is checked on its own.
std::string shape(const json& n) {
  std::string s = n.value("kind", "") == "file" ? "(file)" : n.value("name", "") + "(" + n.value("kind", "") + ")";
  const json children = n.value("children", json::array());
  if (children.is_array() && !children.empty()) {
    std::vector<std::string> parts;
    for (const json& c : children) parts.push_back(shape(c));
    s.append("[").append(sorted_join(parts)).append("]");
  }
  return s;
}

// jq: def node($n): first(.stack[] | recurse(.children[]?) | select(.name == $n));
const json* find_node(const json& n, const std::string& name) {
  if (n.value("name", "") == name) return &n;
  if (n.contains("children") && n["children"].is_array()) {
    for (const json& c : n["children"]) {
      if (const json* hit = find_node(c, name)) return hit;
    }
  }
  return nullptr;
}

bool matches(const Got& g, const std::string& re) {
  return g && g->is_string() &&
         std::regex_search(g->get<std::string>(), std::regex(re, std::regex::ECMAScript | std::regex::icase));
}

bool one_of(const Got& g, const json& choices) {
  return g && std::find(choices.begin(), choices.end(), *g) != choices.end();
}

// One detection as `iogate detect --root TREE PATH --output-format json` makes it: the root
// accepted (check_root_flag), detect_storage_stack, detect_report_to_json printed and read back.
struct Detection {
  std::string name;  // "FIXTURE PATH", the start of every check's message
  std::optional<json> j;

  explicit operator bool() const { return j.has_value(); }
  Got at(const std::string& pointer) const { return ::at(j, pointer); }
  // jq stack_shape: [.stack[] | shape] | sort | join(",")
  Got stack_shape() const {
    Got stack = at("/stack");
    if (!stack || !stack->is_array()) return std::nullopt;
    std::vector<std::string> parts;
    for (const json& n : *stack) parts.push_back(shape(n));
    return json(sorted_join(parts));
  }
  // jq node($n): the first node named `n` anywhere in the stack, depth first; none if there is none.
  Got node(const std::string& n) const {
    Got stack = at("/stack");
    if (!stack || !stack->is_array()) return std::nullopt;
    for (const json& root : *stack) {
      if (const json* hit = find_node(root, n)) return *hit;
    }
    return std::nullopt;
  }
};

// EXPECT(D, GOT, WANT, WHAT): the value GOT equals the JSON WANT (jq ==). Each check's message
// names the case (D's "FIXTURE PATH"), the check (WHAT) and what GOT was.
#define EXPECT(d, got, want, what)                                                                                  \
  do {                                                                                                              \
    const Got got_ = (got);                                                                                         \
    const json want_ = (want);                                                                                      \
    CHECK_MESSAGE((got_ && *got_ == want_),                                                                         \
                  (d).name << ": " << (what) << ": " << #got << " is " << show(got_) << ", want " << want_.dump()); \
  } while (0)

// EXPECT_MATCH(D, GOT, REGEX, WHAT): GOT is a string that REGEX matches, case-insensitively
// (jq: type == "string" and test(REGEX; "i")).
#define EXPECT_MATCH(d, got, re, what)                                                                  \
  do {                                                                                                  \
    const Got got_ = (got);                                                                             \
    CHECK_MESSAGE(matches(got_, re), (d).name << ": " << (what) << ": " << #got << " is " << show(got_) \
                                              << ", which does not match /" << (re) << "/i");           \
  } while (0)

// EXPECT_ONE_OF(D, GOT, CHOICES, WHAT): GOT is one of the JSON array CHOICES (jq IN(...)).
#define EXPECT_ONE_OF(d, got, choices, what)                                                                 \
  do {                                                                                                       \
    const Got got_ = (got);                                                                                  \
    const json choices_ = (choices);                                                                         \
    CHECK_MESSAGE(one_of(got_, choices_), (d).name << ": " << (what) << ": " << #got << " is " << show(got_) \
                                                   << ", not one of " << choices_.dump());                   \
  } while (0)

// The detection of PATH in the fixture's tree, with the checks every detection gets: it succeeds
// and prints JSON (the CLI would exit 0), the schema, and .path echoing PATH. Empty (false) when it
// fails; the failure is recorded.
Detection detect(const Fixture& fx, const std::string& path) {
  Detection d{fx.name + " " + path, std::nullopt};
  std::string failure;
  if (Status s = check_root_flag(fx.root); !s.ok()) {
    failure = "--root refused: " + s.error().message;
  } else if (auto stack = detect_storage_stack(path, DetectOptions{.root = fx.root}); !stack.ok()) {
    failure = "detect failed: " + stack.error().message;
  } else {
    try {
      d.j = json::parse(detect_report_to_json(*stack).dump(2));
    } catch (const json::exception& e) {
      failure = std::string("output is not JSON: ") + e.what();
    }
  }
  CHECK_MESSAGE(failure.empty(), d.name << ": " << failure);
  if (!d) return d;
  EXPECT(d, d.at("/schema"), "iogate.detect/v1", "schema");
  EXPECT(d, d.at("/path"), path, "path echoed");
  return d;
}

constexpr uint64_t kSector = 512;

const std::string kOverlay2 = "/var/lib/docker/overlay2";
const std::string kContainer = "4f2a9c1e7b3d5a8f0e6c2b9d1a7f3e5c8b0d2a4f6e8c1b3d5a7f9e0c2b4d6a8f";

// One detection: `iogate detect --root <the fixture's tree> PATH`, its class, a regex its reason
// matches (case-insensitively), what the row shows (for the messages), and the checks particular
// to it (none: nullptr).
struct Row {
  std::string fixture, path, klass, reason, why;
  void (*more)(const Detection&);
};

const std::vector<Row> kRows = {
    // ---- local disks ----
    // nvme_local: local PCIe NVMe; /data2 a tmpfs decoy
    {"nvme_local", "/data/db", "nvme", "Samsung SSD 980 PRO 1TB([^ ]|$)", "class nvme",
     [](const Detection& d) {
       EXPECT(d, d.at("/mount/point"), "/data", "mount point /data (not /data2, not /)");
       EXPECT(d, d.at("/mount/fstype"), "ext4", "fstype");
       EXPECT(d, d.at("/mount/source"), "/dev/nvme0n1p1", "mount source");
       EXPECT(d, d.at("/mount/options"), "rw,relatime", "per-mount options");
       EXPECT(d, d.at("/mount/read_only"), false, "read-write");
       EXPECT(d, d.at("/slowest_leaf"), "nvme0n1", "slowest leaf is the namespace");
       EXPECT(d, d.at("/overlay_lowerdirs"), json::array(), "no lowerdirs");
       EXPECT(d, d.stack_shape(), "nvme0n1p1(partition)[nvme0n1(disk)]", "stack: partition over disk");
       EXPECT(d, fields(d.node("nvme0n1p1"), {"class", "transport", "rotational", "removable"}),
              R"(["nvme","nvme",false,false])"_json, "partition: class, transport, rotational, removable");
       EXPECT(d, at(d.node("nvme0n1p1"), "/size_bytes"), 1048576000 * kSector, "partition size from its own size file");
       EXPECT(d, fields(d.node("nvme0n1p1"), {"logical_block_size", "physical_block_size", "nr_requests", "scheduler"}),
              R"([512,4096,1023,"none"])"_json, "partition reports its disk's queue/ (bracketed scheduler)");
       EXPECT(d, fields(d.node("nvme0n1"), {"model", "transport", "size_bytes"}),
              json::array({"Samsung SSD 980 PRO 1TB", "nvme", 1953525168 * kSector}),
              "disk: model trimmed of padding, transport, size");
       EXPECT(d, at(d.node("nvme0n1"), "/backing_file"), "", "no backing file");
       // "human output names the class": the CLI's human format, tests/integration/test_detect_fixtures.sh.
     }},
    {"nvme_local", "/data2/cache", "ram", "tmpfs: the file system lives in memory", "tmpfs is ram",
     [](const Detection& d) {
       EXPECT(d, d.at("/mount/fstype"), "tmpfs", "/data2 is the tmpfs");
       EXPECT(d, d.at("/stack"), json::array(), "tmpfs has no stack");
       EXPECT(d, d.at("/slowest_leaf"), "", "no leaf");
     }},
    {"nvme_local", "/database", "nvme", "nvme0n1p2 \\(partition\\) → nvme0n1: NVMe", "the root partition's disk",
     [](const Detection& d) {
       EXPECT(d, d.at("/mount/point"), "/", "/database is under /, not /data");
       EXPECT(d, d.stack_shape(), "nvme0n1p2(partition)[nvme0n1(disk)]", "root partition");
     }},
    // sata_ssd: mount table in proc/self only
    {"sata_ssd", "/srv/www", "sata-ssd", "rotational", "class sata-ssd",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"point", "source", "fstype"}), R"(["/srv","/dev/sda2","ext4"])"_json,
              "mount from proc/self/mountinfo (no proc/1)");
       EXPECT(d, d.stack_shape(), "sda2(partition)[sda(disk)]", "stack");
       EXPECT(d, d.at("/slowest_leaf"), "sda", "slowest leaf");
       EXPECT(d, fields(d.node("sda"), {"transport", "vendor", "model", "rotational"}),
              R"(["sata","ATA","Samsung SSD 870",false])"_json,
              "disk: transport sata, vendor/model trimmed, non-rotational");
       EXPECT(d, fields(d.node("sda"), {"scheduler", "nr_requests"}), R"(["mq-deadline",64])"_json,
              "scheduler is the bracketed one");
     }},
    // sata_hdd: proc/1 and a container's proc/self
    {"sata_hdd", "/backup/2024", "hdd", "rotational", "class hdd",
     [](const Detection& d) {
       EXPECT(d, d.at("/mount/point"), "/backup", "mount from proc/1 (proc/self is a container's view)");
       EXPECT(d, fields(d.at("/mount"), {"fstype", "read_only", "options"}), R"(["xfs",true,"ro,relatime"])"_json,
              "read-only xfs");
       EXPECT(d, d.stack_shape(), "sdb(disk)", "fs on the whole disk");
       EXPECT(d, d.at("/slowest_leaf"), "sdb", "slowest leaf");
       EXPECT(d, fields(d.node("sdb"), {"transport", "model", "rotational", "physical_block_size"}),
              R"(["sata","ST4000DM004-2CV1",true,4096])"_json, "disk attributes");
     }},
    {"sas_hdd", "/var/lib/hdfs/dn", "hdd", "rotational", "class hdd",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "sda1(partition)[sda(disk)]", "stack");
       EXPECT(d, fields(d.node("sda"), {"transport", "vendor", "model"}), R"(["sas","SEAGATE","ST4000NM0023"])"_json,
              "SAS disk: transport sas");
       EXPECT(d, d.at("/slowest_leaf"), "sda", "slowest leaf");
     }},
    {"virtio_blk", "/home/user/project", "virtio", "virtio", "class virtio despite rotational=1",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"point", "source", "fstype"}), R"(["/","/dev/vda1","ext4"])"_json,
              "root mount");
       EXPECT(d, d.stack_shape(), "vda1(partition)[vda(disk)]", "stack");
       EXPECT(d, fields(d.node("vda"), {"transport", "rotational", "scheduler", "nr_requests", "physical_block_size"}),
              R"(["virtio",true,"mq-deadline",256,4096])"_json, "virtio disk attributes");
       EXPECT(d, at(d.node("vda"), "/size_bytes"), 536870912 * kSector, "disk size");
       EXPECT(d, d.at("/slowest_leaf"), "vda", "slowest leaf");
     }},
    // usb_stick: a mount point with a space
    {"usb_stick", "/media/alice/My Stick/DCIM", "usb", "usb", "class usb",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"point", "fstype", "source"}),
              R"(["/media/alice/My Stick","vfat","/dev/sdd1"])"_json, "mount point unescaped from \\040");
       EXPECT(d, d.stack_shape(), "sdd1(partition)[sdd(disk)]", "stack");
       EXPECT(d, fields(d.node("sdd"), {"transport", "removable", "vendor", "model"}),
              R"(["usb",true,"SanDisk","Ultra"])"_json, "removable USB disk");
       EXPECT(d, d.at("/slowest_leaf"), "sdd", "slowest leaf");
     }},
    {"mmc_sdcard", "/home/pi", "mmc", "mmc|SD", "class mmc",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "mmcblk0p2(partition)[mmcblk0(disk)]", "mmcblk partition naming");
       EXPECT(d, at(d.node("mmcblk0"), "/transport"), "mmc", "transport mmc");
     }},
    {"zram", "/var/cache/build/x", "ram", "zram|ram", "zram is ram",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "zram0(ram)", "kind ram");
       EXPECT(d, d.at("/slowest_leaf"), "zram0", "slowest leaf");
     }},
    // ---- clouds ----
    {"aws_ebs", "/data/x", "cloud-block", "Amazon Elastic Block Store", "EBS is cloud-block",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "nvme1n1(disk)", "the data volume, not the root one");
       EXPECT(d, fields(d.node("nvme1n1"), {"model", "transport"}), R"(["Amazon Elastic Block Store","nvme"])"_json,
              "model trimmed, transport nvme");
       EXPECT(d, d.at("/mount/fstype"), "xfs", "fstype");
       EXPECT(d, d.at("/slowest_leaf"), "nvme1n1", "slowest leaf");
     }},
    {"ec2_instance_store", "/mnt/scratch/tmp", "nvme", "Amazon EC2 NVMe Instance Storage", "instance store is nvme",
     [](const Detection& d) { EXPECT(d, d.stack_shape(), "nvme1n1(disk)", "stack"); }},
    {"ec2_instance_store", "/etc", "cloud-block", "Amazon Elastic Block Store\" is AWS EBS",
     "the root EBS volume is cloud-block",
     [](const Detection& d) { EXPECT(d, d.stack_shape(), "nvme0n1p1(partition)[nvme0n1(disk)]", "root stack"); }},
    {"gcp_pd_scsi", "/home/user", "cloud-block", "PersistentDisk",
     "GCE PD over virtio-scsi is cloud-block (not virtio, not hdd)",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "sda1(partition)[sda(disk)]", "stack");
       EXPECT(d, fields(d.node("sda"), {"vendor", "model", "rotational"}), R"(["Google","PersistentDisk",true])"_json,
              "vendor/model trimmed");
     }},
    {"gcp_pd_nvme", "/mnt/disks/data/x", "cloud-block", "nvme_card-pd", "nvme_card-pd is cloud-block",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "nvme0n2(disk)", "second namespace");
       EXPECT(d, d.at("/slowest_leaf"), "nvme0n2", "slowest leaf");
     }},
    {"gcp_local_ssd", "/mnt/disks/ssd0", "nvme", "nvme_card0", "nvme_card0 (local SSD) is nvme",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "nvme1n1(disk)", "stack");
       EXPECT(d, fields(d.node("nvme1n1"), {"logical_block_size", "physical_block_size"}), R"([4096,4096])"_json,
              "4K blocks");
     }},
    {"gcp_local_ssd", "/", "cloud-block", "nvme_card-pd\" is GCP Persistent Disk",
     "the boot PD (nvme_card-pd) is cloud-block", nullptr},
    {"azure_scsi", "/datadrive/db", "cloud-block", "Virtual Disk", "Msft Virtual Disk is cloud-block",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "sdc1(partition)[sdc(disk)]", "the data disk");
       EXPECT(d, fields(d.node("sdc"), {"vendor", "model"}), R"(["Msft","Virtual Disk"])"_json, "vendor/model trimmed");
     }},
    {"azure_nvme", "/datadrive", "cloud-block", "MSFT NVMe Accelerator v1\\.0",
     "MSFT NVMe Accelerator v1.0 is cloud-block",
     [](const Detection& d) { EXPECT(d, d.stack_shape(), "nvme0n2(disk)", "stack"); }},
    {"azure_nvme", "/mnt/tmp", "nvme", "Microsoft NVMe Direct Disk", "Microsoft NVMe Direct Disk is nvme",
     [](const Detection& d) { EXPECT(d, d.stack_shape(), "nvme1n1(disk)", "stack"); }},
    {"nvme_tcp", "/mnt/remote/vol", "nvme-of", "tcp", "NVMe/TCP is nvme-of",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "nvme2n1(disk)", "stack");
       EXPECT(d, at(d.node("nvme2n1"), "/transport"), "tcp", "transport from the controller's transport file");
       EXPECT(d, d.at("/slowest_leaf"), "nvme2n1", "slowest leaf");
     }},
    // ---- stacked devices ----
    {"lvm_nvme", "/var/lib/postgresql", "nvme", "nvme0n1|Samsung", "class of the only leaf",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"point", "source"}), R"(["/","/dev/mapper/vg0-root"])"_json, "root on the LV");
       EXPECT(d, d.stack_shape(), "dm-0(lvm)[nvme0n1p2(partition)[nvme0n1(disk)]]", "LV over partition over disk");
       EXPECT(d, at(d.node("dm-0"), "/class"), "nvme", "inner node takes its leaves' class");
       EXPECT(d, d.at("/slowest_leaf"), "nvme0n1", "slowest leaf");
     }},
    {"lvm_mixed", "/srv/media/movies", "mixed", "sda|hdd", "NVMe + HDD is mixed",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "dm-1(lvm)[nvme0n1p3(partition)[nvme0n1(disk)],sda1(partition)[sda(disk)]]",
              "LV over two PVs");
       EXPECT(d, array({at(d.node("dm-1"), "/class"), at(d.node("nvme0n1"), "/class"), at(d.node("sda"), "/class")}),
              R"(["mixed","nvme","hdd"])"_json, "per-node classes");
       EXPECT(d, d.at("/slowest_leaf"), "sda", "slowest leaf is the HDD");
     }},
    {"md_raid1", "/srv/data/x", "sata-ssd", "raid1|md0|rotational", "RAID1 of two SATA SSDs",
     [](const Detection& d) {
       EXPECT(d, d.at("/mount/point"), "/srv/data", "bind mount of a subtree");
       EXPECT(d, d.stack_shape(), "md0(md-raid1)[sda1(partition)[sda(disk)],sdb1(partition)[sdb(disk)]]",
              "md over two partitions");
       EXPECT_ONE_OF(d, d.at("/slowest_leaf"), R"(["sda","sdb"])"_json, "slowest leaf is one of the mirrors");
     }},
    {"dm_crypt", "/home/alice", "nvme", "^dm-0 \\(dm-crypt\\) → nvme0n1p3 \\(partition\\) → nvme0n1: NVMe",
     "class of the leaf",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"point", "source"}),
              R"(["/home","/dev/mapper/luks-3f6c2a9e-0b4d-4e8f-9a1c-5d7e2b8f6c40"])"_json, "mount");
       EXPECT(d, d.stack_shape(), "dm-0(dm-crypt)[nvme0n1p3(partition)[nvme0n1(disk)]]", "crypt over partition");
       EXPECT(d, at(d.node("dm-0"), "/logical_block_size"), 4096, "dm-0's own queue");
       EXPECT(d, d.at("/slowest_leaf"), "nvme0n1", "slowest leaf");
     }},
    // loop_tmpfs: loop devices over files
    {"loop_tmpfs", "/mnt/scratch/x", "ram", "tmpfs|ram|/dev/shm", "loop over a tmpfs file is ram",
     [](const Detection& d) {
       EXPECT(d, d.stack_shape(), "loop0(loop)[(file)]", "loop over its backing file, the file on no device");
       EXPECT(d, at(d.node("loop0"), "/backing_file"), "/dev/shm/scratch.img", "backing file");
       EXPECT_MATCH(d, d.at("/stack/0/children/0/name"), "scratch\\.img", "the file node names the file");
     }},
    {"loop_tmpfs", "/snap/core22/1380/usr", "virtio",
     "core22_1380\\.snap \\(file\\) → vda1 \\(partition\\) → vda: a virtio disk", "loop over a file on the virtio root",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"fstype", "read_only"}), R"(["squashfs",true])"_json, "read-only squashfs");
       EXPECT(d, d.stack_shape(), "loop1(loop)[(file)[vda1(partition)[vda(disk)]]]",
              "the file's children are its fs's stack");
       EXPECT(d, d.at("/slowest_leaf"), "vda", "slowest leaf");
     }},
    // ---- file systems without a block device ----
    {"nfs4", "/mnt/nfs/alice", "network-fs",
     "^nfs4 mount of fileserver\\.example\\.com:/export/home: nfs 4\\.2 from fileserver\\.example\\.com, a network "
     "file system$",
     "class network-fs; the reason names the fs type, backend, version and server",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"fstype", "source"}), R"(["nfs4","fileserver.example.com:/export/home"])"_json,
              "mount");
       EXPECT(d, d.at("/network"), R"({
         "backend": "nfs", "servers": ["fileserver.example.com"], "export": "/export/home", "volume": "",
         "options": {"version": "4.2", "proto": "tcp", "nconnect": 0, "rsize_bytes": 1048576, "wsize_bytes": 1048576,
                     "hard_soft": "hard", "attr_cache": [], "max_read_bytes": 0, "allow_other": false}})"_json,
              "the network object");
       EXPECT(d, d.at("/stack"), json::array(), "no stack");
       EXPECT(d, d.at("/slowest_leaf"), "", "no leaf");
     }},
    // The root, a local disk: the network object is there, empty, as every key of the report is.
    {"nfs4", "/etc", "sata-ssd", "sda1 \\(partition\\) → sda: SATA disk", "the root, a local SATA SSD",
     [](const Detection& d) {
       EXPECT(d, d.at("/network/backend"), "", "no backend for a local disk");
       EXPECT(d, d.at("/network/servers"), json::array(), "no servers");
       EXPECT(d, d.at("/network/options/max_read_bytes"), 0, "options present, zero");
     }},
    // lustre: an HPC login node: Lustre over InfiniBand, NFSv3 and NFSv4.2
    {"lustre", "/bigwork/alice/run1", "network-fs",
     "^lustre mount of .*: lustre from 192\\.168\\.255\\.3@o2ib,192\\.168\\.255\\.4@o2ib, a parallel", "class",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/network"), {"backend", "servers", "volume", "export"}),
              R"(["lustre", ["192.168.255.3@o2ib", "192.168.255.4@o2ib"], "bwlfs1", "/"])"_json,
              "the MGS NIDs and fsname");
       EXPECT(d, d.at("/stack"), json::array(), "no stack");
     }},
    {"lustre", "/software/ZZZZ10001/bin", "network-fs", "^nfs mount of sw\\.css\\.lan:.*: nfs 3 from sw\\.css\\.lan",
     "NFSv3 is network-fs",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/network"), {"backend", "servers"}), R"(["nfs", ["sw.css.lan"]])"_json, "NFSv3 server");
       EXPECT(d, fields(d.at("/network/options"), {"version", "proto", "hard_soft"}), R"(["3", "tcp", "soft"])"_json,
              "v3 over tcp, soft (mountproto=udp is the mount protocol only)");
     }},
    {"lustre", "/home/nhulgroo", "network-fs", "^nfs4 mount of fs6home\\.css\\.lan:/home/nhulgroo: nfs 4\\.2",
     "NFSv4.2 is network-fs",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/network/options"), {"version", "hard_soft", "rsize_bytes"}),
              R"(["4.2", "hard", 1048576])"_json, "v4.2, hard, 1 MiB reads");
     }},
    {"lustre", "/home", "sata-ssd", "sda2 \\(partition\\) → sda: SATA disk", "the decoy root",
     [](const Detection& d) { EXPECT(d, d.at("/network/backend"), "", "/home itself is on the local root"); }},
    // fuse_object: mount-s3 as plain fuse, JuiceFS, gcsfuse over a local NVMe root
    {"fuse_object", "/mnt/s3/train/shard-00001.tar", "network-fs",
     "^fuse mount of mountpoint-s3: mountpoint-s3, an object store through FUSE$", "not the root's NVMe",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/network"), {"backend", "servers", "volume"}), R"(["mountpoint-s3", [], ""])"_json,
              "told by its source; the bucket is not in the mount table");
       EXPECT(d, d.at("/network/options/allow_other"), true, "allow_other");
     }},
    {"fuse_object", "/jfs/data", "network-fs", "juicefs, a distributed file system through FUSE",
     "JuiceFS is network-fs",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/network"), {"backend", "volume"}), R"(["juicefs", "alphalib"])"_json, "JuiceFS volume");
       EXPECT(d, d.at("/network/options/max_read_bytes"), 131072, "max_read");
     }},
    {"fuse_object", "/gcs", "network-fs", "gcsfuse, an object store through FUSE", "gcsfuse is network-fs",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/network"), {"backend", "volume"}), R"(["gcsfuse", "training-shards"])"_json, "bucket");
       EXPECT(d, d.at("/network/options/allow_other"), false, "no allow_other");
     }},
    // overlay: a Docker overlay2 container root
    {"overlay", kOverlay2 + "/" + kContainer + "/merged/app", "virtio", "vdb|virtio", "class of the upperdir's disk",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"point", "fstype"}),
              json::array({kOverlay2 + "/" + kContainer + "/merged", "overlay"}), "the overlay mount");
       EXPECT(d, d.stack_shape(), "vdb(disk)", "the upperdir's mount's stack (not /)");
       EXPECT(d, d.at("/overlay_lowerdirs"),
              json::array({kOverlay2 + "/l/AB7KQ2ZJ3XWPVYF4N5D6E7R8T9", kOverlay2 + "/l/CD2LM3NP4QR5ST6UV7WX8YZ9A0"}),
              "lowerdirs in order");
       EXPECT(d, d.at("/slowest_leaf"), "vdb", "slowest leaf");
     }},
    // btrfs: one fs over two disks; a root btrfs with subvolumes
    {"btrfs", "/srv/pool/photos", "hdd", "sdb|sdc|rotational", "two HDDs",
     [](const Detection& d) {
       EXPECT(d, fields(d.at("/mount"), {"fstype", "source"}), R"(["btrfs","/dev/sdb"])"_json, "mount");
       EXPECT(d, length(d.at("/stack")), 2, "two stack roots");
       EXPECT(d, d.stack_shape(), "sdb(disk),sdc(disk)", "both members from /sys/fs/btrfs/<uuid>/devices");
       EXPECT_ONE_OF(d, d.at("/slowest_leaf"), R"(["sdb","sdc"])"_json, "slowest leaf is a member");
     }},
    {"btrfs", "/home/alice", "nvme", "^btrfs over 1 device: nvme0n1p2 \\(partition\\) → nvme0n1: NVMe",
     "root btrfs on NVMe",
     [](const Detection& d) {
       EXPECT(d, d.at("/mount/point"), "/home", "subvolume mount");
       EXPECT(d, d.stack_shape(), "nvme0n1p2(partition)[nvme0n1(disk)]", "the member of the other uuid dir");
     }},
};

}  // namespace

TEST_CASE("every fixture under tests/fixtures/sysfs/cases has a row in the table, and every row a fixture") {
  std::set<std::string> on_disk, in_table;
  for (const auto& e : fs::directory_iterator(cases_dir())) {
    if (e.path().extension() == ".sh") on_disk.insert(e.path().stem().string());
  }
  for (const Row& r : kRows) in_table.insert(r.fixture);
  std::vector<std::string> no_row, no_fixture;
  std::set_difference(on_disk.begin(), on_disk.end(), in_table.begin(), in_table.end(), std::back_inserter(no_row));
  std::set_difference(in_table.begin(), in_table.end(), on_disk.begin(), on_disk.end(), std::back_inserter(no_fixture));
  CHECK_MESSAGE(no_row.empty(), "fixtures under cases/ without a row in kRows: " << json(no_row).dump());
  CHECK_MESSAGE(no_fixture.empty(), "rows of kRows without a fixture under cases/: " << json(no_fixture).dump());
}

TEST_CASE("detect: every row of the table") {
  for (const Row& r : kRows) {
    Fixture fx = fixture(r.fixture);
    if (fx.root.empty()) continue;
    if (auto d = detect(fx, r.path)) {
      EXPECT(d, d.at("/class"), r.klass, r.why);
      EXPECT_MATCH(d, d.at("/reason"), r.reason, "the reason");
      if (r.more) r.more(d);
    }
  }
}
