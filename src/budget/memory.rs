//! The most memory this process may use: the least of the machine's
//! memory, its cgroup's memory limit and its address-space limit (`ulimit
//! -v`), the last less what the process already maps and what each thread
//! it is about to start reserves. A run sized against `MemTotal` alone is
//! let through under a 2 GiB `ulimit -v` and dies on its first large
//! allocation (exit 134), instead of being refused with its figure.

use std::path::{Path, PathBuf};

/// Memory assumed when none of the limits can be read (bytes).
const FALLBACK_BYTES: u64 = 16 << 30;
/// Address space glibc's malloc reserves for each thread's arena: its
/// `HEAP_MAX_SIZE`, 2 × `DEFAULT_MMAP_THRESHOLD_MAX` (4 MiB × the size of
/// a `long`), 64 MiB on 64-bit targets (glibc `malloc/arena.c`).
const ARENA_RESERVE_BYTES: u64 = 64 << 20;
/// A thread's stack: Rust's default for spawned threads, which rayon's
/// workers keep (`std::thread`: "the default stack size is 2 MiB").
const THREAD_STACK_BYTES: u64 = 2 << 20;
/// Address space a run maps per byte the estimate says it holds: vectors
/// grown by doubling keep up to twice what they hold mapped (untouched,
/// so it costs address space but no memory), and freed blocks stay in
/// malloc's arenas. Measured: a 196,600-pair mesh estimated at 3,762 MiB
/// maps 4,139 MiB at its peak (`VmPeak`; 2,609 MiB resident), and under
/// a 4 GiB `ulimit -v` it aborts 43 s into its run.
const ADDRESS_SPACE_PER_BYTE: f64 = 1.25;
/// Bytes per KiB, the unit of `/proc` figures.
const KIB: u64 = 1024;
/// Where cgroup v2 hierarchies are mounted: alone, or beside v1's
/// controllers (a "hybrid" system).
const CGROUP2_ROOTS: [&str; 2] = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"];
/// Where cgroup v1's memory controller is mounted.
const CGROUP1_MEMORY_ROOT: &str = "/sys/fs/cgroup/memory";

/// Which limit sets the memory a process may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Machine,
    Cgroup,
    AddressSpace,
}

impl Which {
    /// How an error names it.
    pub fn name(self) -> &'static str {
        match self {
            Which::Machine => "this machine's memory",
            Which::Cgroup => "the cgroup's memory limit",
            Which::AddressSpace => "the address-space limit, ulimit -v",
        }
    }
}

/// The memory this process may use, and the limit that sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    pub which: Which,
}

/// The memory this process may use once it has started `threads` worker
/// threads.
pub fn limit(threads: usize) -> Limit {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let machine = read("/proc/meminfo").and_then(|t| mem_total(&t));
    let cgroup = read("/proc/self/cgroup").and_then(|t| cgroup_limit(&t, &|p| read_path(p)));
    let space = read("/proc/self/limits")
        .and_then(|t| address_space_limit(&t))
        .map(|limit| {
            let mapped = read("/proc/self/status")
                .and_then(|t| vm_size(&t))
                .unwrap_or(0);
            usable_address_space(limit, mapped, threads)
        });
    least(machine, cgroup, space)
}

fn read_path(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The least of the limits that could be read.
fn least(machine: Option<u64>, cgroup: Option<u64>, space: Option<u64>) -> Limit {
    [
        (machine, Which::Machine),
        (cgroup, Which::Cgroup),
        (space, Which::AddressSpace),
    ]
    .into_iter()
    .filter_map(|(bytes, which)| {
        Some(Limit {
            bytes: bytes?,
            which,
        })
    })
    .min_by_key(|l| l.bytes)
    .unwrap_or(Limit {
        bytes: FALLBACK_BYTES,
        which: Which::Machine,
    })
}

/// What an address-space limit of `limit` bytes leaves for runs to hold,
/// with `mapped` bytes already mapped (`VmSize`) and `threads` threads to
/// start, each with its stack and its malloc arena's reservation.
fn usable_address_space(limit: u64, mapped: u64, threads: usize) -> u64 {
    let per_thread = ARENA_RESERVE_BYTES + THREAD_STACK_BYTES;
    let left = limit
        .saturating_sub(mapped)
        .saturating_sub(per_thread.saturating_mul(threads as u64));
    (left as f64 / ADDRESS_SPACE_PER_BYTE) as u64
}

/// `MemTotal` of `/proc/meminfo` (proc(5)), in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemTotal:")
}

/// `VmSize` of `/proc/self/status` (proc(5)): the address space the
/// process maps, in bytes.
fn vm_size(status: &str) -> Option<u64> {
    kib_field(status, "VmSize:")
}

/// The figure in KiB of the line starting with `name`, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(KIB)
}

/// The soft limit of "Max address space" in `/proc/self/limits` (proc(5);
/// `RLIMIT_AS`, what `ulimit -v` sets), in bytes; none when unlimited.
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// The least memory limit of this process's cgroup and its ancestors
/// (the kernel enforces each): `memory.max` under cgroup v2
/// (Documentation/admin-guide/cgroup-v2.rst; `max` is none),
/// `memory.limit_in_bytes` under v1's memory controller
/// (Documentation/admin-guide/cgroup-v1/memory.rst). `cgroups` is
/// `/proc/self/cgroup` (cgroups(7): `id:controllers:path` lines); `read`
/// reads a file.
fn cgroup_limit(cgroups: &str, read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let mut files: Vec<PathBuf> = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (roots, file): (&[&str], &str) = if controllers.is_empty() {
            (&CGROUP2_ROOTS, "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (&[CGROUP1_MEMORY_ROOT], "memory.limit_in_bytes")
        } else {
            continue;
        };
        // The cgroup and each of its ancestors; in a cgroup namespace the
        // path is `/` and the root is the namespace's own cgroup.
        for dir in Path::new(path).ancestors() {
            let relative = dir.strip_prefix("/").unwrap_or(dir);
            for root in roots {
                files.push(Path::new(root).join(relative).join(file));
            }
        }
    }
    files
        .iter()
        .filter_map(|f| read(f))
        .filter_map(|text| text.trim().parse::<u64>().ok())
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: &str = "\
Limit                     Soft Limit           Hard Limit           Units
Max stack size            8388608              unlimited            bytes
Max address space         2147483648           4294967296           bytes
Max file locks            unlimited            unlimited            locks
";

    #[test]
    fn the_address_space_limit_is_the_soft_one_less_maps_and_threads() {
        assert_eq!(address_space_limit(LIMITS), Some(2 << 30));
        let unlimited = LIMITS.replace("2147483648           4294967296", "unlimited unlimited");
        assert_eq!(address_space_limit(&unlimited), None);
        let status = "Name:\tfdlab\nVmPeak:\t  99999 kB\nVmSize:\t   10240 kB\n";
        assert_eq!(vm_size(status), Some(10 << 20));
        // 2 GiB less 10 MiB mapped, less 2 threads x 66 MiB, over 1.25.
        assert_eq!(
            usable_address_space(2 << 30, 10 << 20, 2),
            ((2048 - 10 - 132) << 20) * 4 / 5
        );
        assert_eq!(usable_address_space(100 << 20, 10 << 20, 2), 0);
    }

    #[test]
    fn the_least_limit_is_named() {
        let l = least(Some(24 << 30), None, Some(2 << 30));
        assert_eq!(l.which, Which::AddressSpace);
        let l = least(Some(24 << 30), Some(1 << 30), Some(2 << 30));
        assert_eq!((l.bytes, l.which), (1 << 30, Which::Cgroup));
        assert_eq!(least(None, None, None).bytes, FALLBACK_BYTES);
        assert_eq!(
            mem_total("MemTotal:       24684096 kB\n"),
            Some(24684096 * 1024)
        );
    }

    #[test]
    fn a_cgroup_limit_is_the_least_of_its_ancestors_in_either_version() {
        let files = |path: &Path| -> Option<String> {
            match path.to_str()? {
                "/sys/fs/cgroup/app/memory.max" => Some("max\n".into()),
                "/sys/fs/cgroup/memory.max" => Some("3221225472\n".into()),
                "/sys/fs/cgroup/memory/job/task/memory.limit_in_bytes" => {
                    Some("1073741824\n".into())
                }
                "/sys/fs/cgroup/memory/job/memory.limit_in_bytes" => {
                    Some("9223372036854771712\n".into())
                }
                _ => None,
            }
        };
        assert_eq!(cgroup_limit("0::/app\n", &files), Some(3 << 30));
        assert_eq!(
            cgroup_limit("4:memory:/job/task\n0::/\n", &files),
            Some(1 << 30)
        );
        assert_eq!(cgroup_limit("3:cpu,cpuacct:/job\n", &files), None);
        assert_eq!(cgroup_limit("0::/elsewhere\n", &|_| None), None);
    }
}
