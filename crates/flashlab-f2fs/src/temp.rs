//! The six active logs and F2FS's temperature rules
//! (`__get_segment_type_6`, segment.c).

/// Number of active logs (`NR_CURSEG_TYPE`).
pub const NR_LOGS: usize = 6;

/// A log (`CURSEG_*`), in the kernel's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LogType {
    HotData = 0,
    WarmData = 1,
    ColdData = 2,
    HotNode = 3,
    WarmNode = 4,
    ColdNode = 5,
}

/// What a node block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeKind {
    Inode = 1,
    Direct = 2,
    Indirect = 3,
}

/// Why a data block is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataWrite {
    /// Writeback of a page of a regular file.
    Normal,
    /// Moved by cleaning (`page_private_gcing`).
    GcMoved,
}

impl LogType {
    pub const ALL: [LogType; NR_LOGS] = [
        LogType::HotData,
        LogType::WarmData,
        LogType::ColdData,
        LogType::HotNode,
        LogType::WarmNode,
        LogType::ColdNode,
    ];
    pub const DATA: [LogType; 3] = [LogType::HotData, LogType::WarmData, LogType::ColdData];

    pub fn is_data(self) -> bool {
        (self as u8) < 3
    }

    pub fn from_u8(v: u8) -> LogType {
        Self::ALL[v as usize % NR_LOGS]
    }

    /// `__get_segment_type_6` for a data block: directory entries hot;
    /// GC-moved data and cold files (`is_cold_data`, `file_is_cold`)
    /// cold; everything else warm (`f2fs_rw_hint_to_seg_type` without a hint).
    pub fn for_data(is_dir: bool, cold_file: bool, why: DataWrite) -> LogType {
        if is_dir {
            LogType::HotData
        } else if cold_file || why == DataWrite::GcMoved {
            LogType::ColdData
        } else {
            LogType::WarmData
        }
    }

    /// `__get_segment_type_6` for a node block: direct nodes (inodes
    /// included, `IS_DNODE`) of directories hot, of files warm
    /// (`is_cold_node` set by `set_cold_node` for non-directories);
    /// indirect nodes cold.
    pub fn for_node(kind: NodeKind, of_dir: bool) -> LogType {
        match kind {
            NodeKind::Indirect => LogType::ColdNode,
            _ if of_dir => LogType::HotNode,
            _ => LogType::WarmNode,
        }
    }
}
