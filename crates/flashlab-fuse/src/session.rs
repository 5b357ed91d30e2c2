//! Mounting and serving: the checks made before mounting, and a session loop that ends
//! on unmount (`umount MOUNTDIR`) or on SIGINT/SIGTERM (which unmount first).

use fuser::{Config, Filesystem, MountOption, Session};
use std::path::Path;
use thiserror::Error;

/// Why serving could not start or ended badly.
#[derive(Debug, Error)]
pub enum MountError {
    #[error("mount point {0}: does not exist")]
    Missing(String),
    #[error("mount point {0}: is not a directory")]
    NotDir(String),
    #[error("mount point {0}: is not empty (expected an empty directory)")]
    NotEmpty(String),
    #[error("/dev/fuse is missing (load the fuse module, or run where FUSE is available)")]
    NoFuse,
    #[error("cannot mount on {0}: {1}")]
    Mount(String, std::io::Error),
    #[error("serving {0} failed: {1}")]
    Serve(String, std::io::Error),
}

/// Check that `dir` is an existing, empty directory and that /dev/fuse exists.
pub fn check_mount_point(dir: &Path) -> Result<(), MountError> {
    let name = dir.display().to_string();
    let meta = std::fs::metadata(dir).map_err(|_| MountError::Missing(name.clone()))?;
    if !meta.is_dir() {
        return Err(MountError::NotDir(name));
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| MountError::Mount(name.clone(), e))?;
    if entries.next().is_some() {
        return Err(MountError::NotEmpty(name));
    }
    if !Path::new("/dev/fuse").exists() {
        return Err(MountError::NoFuse);
    }
    Ok(())
}

/// Mount `fs` on `dir` and serve it until it is unmounted or the process gets SIGINT or
/// SIGTERM (then it unmounts itself). `ready` runs once the mount is in place.
pub fn serve<F: Filesystem>(fs: F, dir: &Path, fsname: &str, ready: impl FnOnce()) -> Result<(), MountError> {
    check_mount_point(dir)?;
    let name = dir.display().to_string();
    // Block the signals in this thread before any other starts, so that only the waiter
    // below receives them (every thread inherits the mask).
    let set = signal_set();
    // SAFETY: plain libc calls on a sigset_t we own.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    let mut config = Config::default();
    config.mount_options =
        vec![MountOption::FSName(fsname.to_string()), MountOption::Subtype(fsname.to_string()), MountOption::NoAtime];
    let mut session = Session::new(fs, dir, &config).map_err(|e| MountError::Mount(name.clone(), e))?;
    let mut unmounter = session.unmount_callable();
    std::thread::spawn(move || {
        let mut sig = 0;
        // SAFETY: sigwait on the blocked set.
        if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
            let _ = unmounter.unmount();
        }
    });
    ready();
    session.run().map_err(|e| MountError::Serve(name, e))
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        set
    }
}
