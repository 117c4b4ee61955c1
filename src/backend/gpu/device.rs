//! Choosing an adapter, opening the device, building the clip-select pipelines, and noticing device loss.

use crate::error::{Error, ErrorKind, Result};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The WGSL of both passes.
const SHADER: &str = include_str!("clip_select.wgsl");
/// Storage buffers in the clip-select pipeline layout (bindings 1 to 9): one more than WebGPU's portable 8,
/// which every native Vulkan, Metal and DX12 adapter exceeds.
const STORAGE_BUFFERS: u32 = 9;
/// Timestamps between dispatches and between copies: opened where the adapter has them, written only while a
/// results object profiles its batches.
const TIMESTAMPS: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

/// An open device with the clip-select pipelines, shared by the backend and every results object's buffers.
pub struct Gpu {
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    pub(super) info: wgpu::AdapterInfo,
    pub(super) pipelines: Pipelines,
    /// Workgroups the grid-stride passes launch at most: enough to fill a GPU, few enough that a software
    /// adapter (which runs workgroups one after another) does not pay its per-workgroup cost per 64 triangles.
    pub(super) max_workgroups: u32,
    /// Stride between dispatches' parameter blocks (the uniform dynamic-offset alignment).
    pub(super) params_stride: u64,
    /// Largest storage buffer binding the device allows.
    pub(super) max_binding: u64,
    /// Alignment of a storage binding's offset (where the queries start in a batch's upload buffer).
    pub(super) storage_offset_alignment: u64,
    /// Nanoseconds per timestamp tick, where the device writes timestamps between dispatches and copies (for
    /// [`super::BatchProfile`]); `None` where it cannot.
    pub(super) timestamp_period: Option<f64>,
    /// Set by the device-lost callback, by a failed map, or on purpose by [`Gpu::lose`].
    lost: Arc<AtomicBool>,
    /// The first error wgpu reported outside an error scope (a failed submission or a validation error).
    failure: Arc<Mutex<Option<String>>>,
}

/// Is this adapter a real GPU (not a CPU rasterizer such as lavapipe or WARP)?
fn is_hardware(info: &wgpu::AdapterInfo) -> bool {
    matches!(
        info.device_type,
        wgpu::DeviceType::DiscreteGpu
            | wgpu::DeviceType::IntegratedGpu
            | wgpu::DeviceType::VirtualGpu
    )
}

/// Preference among usable adapters: discrete first, software last.
fn rank(info: &wgpu::AdapterInfo) -> u8 {
    match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Vulkan instance extensions that connect to a display server; see [`instance`].
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
const DISPLAY_EXTENSIONS: [&std::ffi::CStr; 3] = [
    c"VK_KHR_wayland_surface",
    c"VK_KHR_xcb_surface",
    c"VK_KHR_xlib_surface",
];

/// A Vulkan instance without the Wayland, XCB and Xlib surface extensions: trocar never presents, and with
/// them enabled Mesa's device-select layer connects to the display server in `vkEnumeratePhysicalDevices`
/// (libwayland prints "error: XDG_RUNTIME_DIR is invalid or not set in the environment." on a headless
/// machine). No Vulkan at all gives an instance with no adapters.
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
// wgpu has no safe way to filter instance extensions: only wgpu-hal's instance callback does.
#[allow(unsafe_code)]
fn instance() -> wgpu::Instance {
    use wgpu::hal::{self, vulkan};
    let desc = hal::InstanceDescriptor {
        name: "trocar",
        flags: wgpu::InstanceFlags::default(),
        memory_budget_thresholds: Default::default(),
        backend_options: Default::default(),
        telemetry: None,
        display: None,
    };
    let without_display = Box::new(|args: vulkan::CreateInstanceCallbackArgs| {
        args.extensions.retain(|e| !DISPLAY_EXTENSIONS.contains(e));
    });
    // SAFETY: wgpu-hal asks callbacks not to remove extensions, but it uses these three only to create
    // surfaces of their kind (checking the list first), and trocar creates no surface. VK_KHR_surface, which
    // the swapchain device extension depends on, stays.
    match unsafe { vulkan::Instance::init_with_callback(&desc, Some(without_display)) } {
        // SAFETY: a freshly created instance, handed over whole.
        Ok(vk) => unsafe { wgpu::Instance::from_hal::<hal::api::Vulkan>(vk) },
        Err(_) => wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::empty(),
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        }),
    }
}

/// A wgpu instance on the platform's primary backends.
#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    })
}

impl Gpu {
    /// Longest wait for a batch before the device counts as lost (a hung device must not block forever): a
    /// software adapter runs the shaders on the host's cores, which a loaded host slows down by minutes.
    pub(super) fn wait_limit(&self) -> std::time::Duration {
        let seconds = if is_hardware(&self.info) { 60 } else { 600 };
        std::time::Duration::from_secs(seconds)
    }

    /// Opens the best adapter: hardware only, unless `allow_software` also admits a software one.
    pub fn open(allow_software: bool) -> Result<Self> {
        let adapter = choose_adapter(allow_software)?;
        let info = adapter.get_info();
        let (device, queue) = open_device(&adapter, &info)?;
        let (lost, failure) = watch(&device);
        let pipelines = build_pipelines(&device, &info)?;
        let max_workgroups = if is_hardware(&info) { 4096 } else { 256 };
        let params_stride = u64::from(device.limits().min_uniform_buffer_offset_alignment)
            .max(super::layout::PARAMS_SIZE);
        let storage_offset_alignment =
            u64::from(device.limits().min_storage_buffer_offset_alignment);
        let max_binding = device
            .limits()
            .max_storage_buffer_binding_size
            .min(device.limits().max_buffer_size);
        let timestamp_period = device
            .features()
            .contains(TIMESTAMPS)
            .then(|| f64::from(queue.get_timestamp_period()));
        Ok(Self {
            device,
            queue,
            info,
            pipelines,
            max_workgroups,
            params_stride,
            max_binding,
            storage_offset_alignment,
            timestamp_period,
            lost,
            failure,
        })
    }
    /// "name (backend, type, driver)".
    pub fn name(&self) -> String {
        let i = &self.info;
        let kind = if is_hardware(i) { "" } else { ", software" };
        format!(
            "{} ({:?}{kind}; {} {})",
            i.name, i.backend, i.driver, i.driver_info
        )
        .replace(" )", ")")
    }

    /// Why the device cannot be used any more, if it cannot.
    pub fn check(&self) -> Result<()> {
        if self.lost.load(Ordering::Acquire) {
            return Err(lost("the GPU device was lost"));
        }
        if let Some(e) = self.failure.lock().as_ref() {
            return Err(lost(format!("a GPU operation failed: {e}")));
        }
        Ok(())
    }

    /// Marks the device lost (a failed map or poll).
    pub fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }

    /// Destroys the device, as a driver reset would.
    pub fn lose(&self) {
        self.mark_lost();
        self.device.destroy();
    }
}

/// A [`ErrorKind::DeviceLost`] error whose message says the context now runs on the CPU.
pub fn lost(what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::DeviceLost,
        format!("{what}; the context now runs on the CPU backend, run the query again"),
    )
}

/// A [`ErrorKind::BackendUnavailable`] error saying `m`.
fn unavailable(m: String) -> Error {
    Error::new(ErrorKind::BackendUnavailable, m)
}

/// The best adapter with compute shaders (by [`rank`]): hardware only, unless `allow_software`.
fn choose_adapter(allow_software: bool) -> Result<wgpu::Adapter> {
    let instance = instance();
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    let seen: Vec<String> = adapters
        .iter()
        .map(|a| {
            let i = a.get_info();
            format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type)
        })
        .collect();
    adapters
        .into_iter()
        .filter(|a| {
            let info = a.get_info();
            (allow_software || is_hardware(&info))
                && a
                    .get_downlevel_capabilities()
                    .flags
                    .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        })
        .min_by_key(|a| rank(&a.get_info()))
        .ok_or_else(|| {
            let found = if seen.is_empty() {
                "no Vulkan, Metal or DX12 adapter at all".to_string()
            } else {
                format!("only {}", seen.join(", "))
            };
            let hint = if allow_software {
                ""
            } else {
                "; set allow_software_gpu (or TROCAR_ALLOW_SOFTWARE_GPU=1) to accept a software adapter"
            };
            unavailable(format!("no usable GPU adapter: {found}{hint}"))
        })
}

/// Opens `adapter` with the limits the clip-select pass needs.
fn open_device(
    adapter: &wgpu::Adapter,
    info: &wgpu::AdapterInfo,
) -> Result<(wgpu::Device, wgpu::Queue)> {
    let available = adapter.limits();
    if available.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS {
        return Err(unavailable(format!(
            "{} binds {} storage buffers per shader, the clip-select pass needs {STORAGE_BUFFERS}",
            info.name, available.max_storage_buffers_per_shader_stage
        )));
    }
    // The portable minimum, plus the storage buffers the pass binds and the largest buffers the adapter
    // offers (a 1M-triangle mesh's indices alone are 12 MB).
    let limits = wgpu::Limits {
        max_storage_buffers_per_shader_stage: STORAGE_BUFFERS,
        max_storage_buffer_binding_size: available.max_storage_buffer_binding_size,
        max_buffer_size: available.max_buffer_size,
        ..wgpu::Limits::downlevel_defaults()
    };
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("trocar"),
        required_features: adapter.features() & TIMESTAMPS,
        required_limits: limits,
        ..Default::default()
    }))
    .map_err(|e| unavailable(format!("could not open {}: {e}", info.name)))
}

/// The device's lost flag and first uncaptured error, set by its callbacks.
fn watch(device: &wgpu::Device) -> (Arc<AtomicBool>, Arc<Mutex<Option<String>>>) {
    let lost = Arc::new(AtomicBool::new(false));
    let failure = Arc::new(Mutex::new(None::<String>));
    {
        let lost = lost.clone();
        device.set_device_lost_callback(move |_, _| lost.store(true, Ordering::Release));
    }
    {
        // wgpu's default handler panics; a library must report instead, so the next call says what failed.
        let failure = failure.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            failure.lock().get_or_insert_with(|| e.to_string());
        }));
    }
    (lost, failure)
}

/// The clip-select pass's bind group layouts and its pipelines.
pub(super) struct Pipelines {
    pub(super) layout: wgpu::BindGroupLayout,
    pub(super) clear: wgpu::ComputePipeline,
    pub(super) cull: wgpu::ComputePipeline,
    pub(super) scan_blocks: wgpu::ComputePipeline,
    pub(super) write: wgpu::ComputePipeline,
    pub(super) evaluate: wgpu::ComputePipeline,
    pub(super) scan_tiles: wgpu::ComputePipeline,
    pub(super) scatter: wgpu::ComputePipeline,
}

/// Builds the clip-select shaders' layouts and pipelines on `device`; a validation error says they do not
/// build there.
fn build_pipelines(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> Result<Pipelines> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("clip_select.wgsl"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("clip_select"),
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: wgpu::BufferSize::new(super::layout::PARAMS_SIZE),
                },
                count: None,
            },
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, false),
            storage(5, false),
            storage(6, false),
            storage(7, false),
            storage(8, false),
            storage(9, true),
        ],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("clip_select"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = |entry: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let clear = pipeline("clear_masks");
    let cull = pipeline("cull_blocks");
    let scan_blocks = pipeline("scan_blocks");
    let write = pipeline("write_candidates");
    let evaluate = pipeline("evaluate_candidates");
    let scan_tiles = pipeline("scan_tiles");
    let scatter = pipeline("scatter_hits");
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(unavailable(format!(
            "the clip-select shaders do not build on {}: {e}",
            info.name
        )));
    }
    Ok(Pipelines {
        layout,
        clear,
        cull,
        scan_blocks,
        write,
        evaluate,
        scan_tiles,
        scatter,
    })
}
