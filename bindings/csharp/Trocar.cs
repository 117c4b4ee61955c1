// P/Invoke binding of trocar's C ABI (include/trocar.h), written the way a Unity native plugin is:
//   - [DllImport("trocar")]: the runtime maps it to libtrocar.so / libtrocar.dylib / trocar.dll (Unity: put the
//     library under Assets/Plugins; Mono on Linux: LD_LIBRARY_PATH or a copy next to the exe). Unity iOS players
//     (UNITY_IOS, not in the Editor) use [DllImport("__Internal")] and the static libtrocar.a instead; see
//     examples_c/unity_native_plugin/README.md.
//   - Only blittable structs ([StructLayout(LayoutKind.Sequential)], float/uint fields; the header's
//     float[3] members are TrocarVec3 {X, Y, Z}, which has the same layout), so arguments are pinned, not
//     marshalled, and no callbacks cross the boundary (IL2CPP-safe: no reverse P/Invoke).
//   - SafeHandle subclasses own the context and results objects (released by the finalizer if not disposed).
//   - Result views are zero-copy: TrocarResultsHandle.Hits() returns ReadOnlySpan<TrocarHit> over the library's
//     storage. Span<T> is in Mono 6.x's mscorlib (tested with mcs 6.8 / mono 6.8) and in Unity 2021.2+; for
//     runtimes without it, compile with -define:TROCAR_NO_SPAN and use HitsView() (an unsafe pointer + Count
//     view with an indexer), which is always available. Both are valid only until the next query into the
//     results object or its disposal, as the C API says.
//   - The library's version is checked once, before the first context or CCD test: same major and, for 0.x,
//     the same minor as the header this file was written for (TrocarVersionException otherwise).
// Compile with -unsafe (mcs -unsafe, or "Allow 'unsafe' code" in Unity).

using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Trocar
{
    public enum TrocarStatus : uint
    {
        Ok = 0,
        ErrorNullPointer = 1,
        ErrorInvalidArgument = 2,
        ErrorOutOfRange = 3,
        ErrorStaleHandle = 4,
        ErrorBackendUnavailable = 5,
        ErrorDeviceLost = 6,
        ErrorOutOfMemory = 7,
        ErrorPanic = 8,
        ErrorPending = 9,
        ErrorResultsOverflow = 10,
    }

    public enum TrocarBackend : uint
    {
        Auto = 0,
        Cpu = 1,
        Gpu = 2,
    }

    public enum TrocarVolume : uint
    {
        Capsule = 0,
        Frustum = 1,
    }

    /// <summary>The header's float[3]: same size and alignment (12 bytes, 4-aligned).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarVec3
    {
        public float X, Y, Z;
        public TrocarVec3(float x, float y, float z) { X = x; Y = y; Z = z; }
        public override string ToString() { return string.Format("({0}, {1}, {2})", X, Y, Z); }
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarContextDef
    {
        public TrocarBackend Backend;
        public uint CpuThreads;
        public uint AllowSoftwareGpu;
        public uint InternalValue; // set by trocar_default_context_def; do not change
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarMeshId
    {
        public uint Index1;
        public uint Context;
        public uint Generation;
        public bool IsNull { get { return Index1 == 0 && Context == 0 && Generation == 0; } }
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarTool
    {
        public TrocarVec3 Entry;
        public TrocarVec3 Tip;
        public float Radius;
        public TrocarVec3 Up; // all-zero: a fixed world axis

        public TrocarTool(TrocarVec3 entry, TrocarVec3 tip, float radius)
        {
            Entry = entry;
            Tip = tip;
            Radius = radius;
            Up = new TrocarVec3();
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarQuery
    {
        public TrocarMeshId Mesh;
        public TrocarTool Tool;
        public uint Dynamic;
        public TrocarVec3 NewTip;
        public TrocarVolume Volume;
        /// <summary>Nonzero: the hits only, without feedback polygons.</summary>
        public uint HitsOnly;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarHit
    {
        public uint Triangle;
        public float DepthMin;
        public float DepthMax;
        public float Distance;
        public TrocarVec3 PointOnMesh;
        public TrocarVec3 PointOnTool;
        public TrocarVec3 Normal;
        public float TimeOfImpact;
        public uint FeedbackFirst;
        public uint FeedbackCount;
        public TrocarVec3 FaceNormal;
        public float Penetration;
        public TrocarVec3 Barycentric;
    }

    /// <summary>Options of a tracker (TrocarTrackerDef); get one from Native.trocar_default_tracker_def().</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarTrackerDef
    {
        public uint SegmentCount;
        public uint MaxStripLength;
        public uint InternalValue;
    }

    /// <summary>One contact between a segment of the tool's axis and a mesh triangle (TrocarContact).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarContact
    {
        /// <summary>Triangle of an empty contact (TROCAR_NO_TRIANGLE): TrocarResults.Contact of a tool that
        /// touches nothing.</summary>
        public const uint NoTriangle = 0xFFFFFFFF;
        public uint Segment;
        public uint Triangle;
        public TrocarVec3 PointOnTool;
        public TrocarVec3 PointOnMesh;
        public TrocarVec3 Normal;
        public float SignedDistance;
        public float Penetration;
    }

    public enum TrocarCcdKind : uint
    {
        VertexFace = 0,
        FaceVertex = 1,
        EdgeEdge = 2,
    }

    /// <summary>Per-primitive culling of a CCD query (TROCAR_CCD_CULLING_*): the same contacts, another speed.</summary>
    public enum TrocarCcdCulling : uint
    {
        Bvh = 0,
        Grid = 1,
        SortAndSweep = 2,
        AllPairs = 3,
    }

    /// <summary>Options of a mesh-against-mesh CCD query (TrocarCcdDef).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarCcdDef
    {
        public double MinSeparation;
        public uint EdgeEdge;
        /// <summary>TROCAR_CCD_CULLING_*: 0 BVH (default), 1 grid, 2 sort-and-sweep, 3 all pairs.</summary>
        public uint Culling;
        public uint InternalValue;
    }

    /// <summary>Where and when two features first meet during the step (TrocarCcdContact; feature_a/b[2] as two
    /// fields each, same layout).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct TrocarCcdContact
    {
        public const uint NoIndex = 0xFFFFFFFF;
        public double TimeOfImpact;
        public TrocarVec3 Point;
        public TrocarVec3 Normal;
        public TrocarCcdKind Kind;
        public uint FeatureA0, FeatureA1;
        public uint FeatureB0, FeatureB1;
    }

    public class TrocarException : Exception
    {
        public readonly TrocarStatus Status;
        public readonly string StatusName;
        public readonly string LibraryMessage;

        public TrocarException(TrocarStatus status, string what, string message)
            : base(string.Format("{0}: {1} ({2}): {3}", what, Native.StatusName(status), (uint)status, message))
        {
            Status = status;
            StatusName = Native.StatusName(status);
            LibraryMessage = message;
        }
    }

    public class TrocarVersionException : Exception
    {
        public TrocarVersionException(string message) : base(message) { }
    }

    /// <summary>The raw entry points, plus the version check and error helpers.</summary>
    public static unsafe class Native
    {
#if UNITY_IOS && !UNITY_EDITOR
        // iOS players link native plug-ins statically (libtrocar.a): the entry points are in the executable itself.
        const string Lib = "__Internal";
#else
        const string Lib = "trocar";
#endif

        // The header this binding was written for (include/trocar.h TROCAR_VERSION_*).
        public const uint VersionMajor = 0;
        public const uint VersionMinor = 5;
        public const uint VersionPatch = 0;
        public const uint Version = (VersionMajor << 16) | (VersionMinor << 8) | VersionPatch;

        [DllImport(Lib)] public static extern UIntPtr trocar_last_error_message(byte* buf, UIntPtr capacity);
        [DllImport(Lib)] public static extern TrocarContextDef trocar_default_context_def();
        [DllImport(Lib)] public static extern TrocarStatus trocar_context_create(ref TrocarContextDef def, out TrocarContextHandle ctx);
        [DllImport(Lib)] public static extern void trocar_context_destroy(IntPtr ctx);
        [DllImport(Lib)] public static extern TrocarBackend trocar_context_backend(TrocarContextHandle ctx);
        [DllImport(Lib)] public static extern UIntPtr trocar_context_device_name(TrocarContextHandle ctx, byte* buf, UIntPtr capacity);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_create(TrocarContextHandle ctx, float* positionsXyz, uint vertexCount, uint* indices, uint triangleCount, out TrocarMeshId mesh);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_update_positions(TrocarContextHandle ctx, TrocarMeshId mesh, uint firstVertex, float* positionsXyz, uint vertexCount);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_set_triangles(TrocarContextHandle ctx, TrocarMeshId mesh, uint* indices, uint triangleCount);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_set_topology(TrocarContextHandle ctx, TrocarMeshId mesh, float* positionsXyz, uint vertexCount, uint* indices, uint triangleCount);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_destroy(TrocarContextHandle ctx, TrocarMeshId mesh);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_counts(TrocarContextHandle ctx, TrocarMeshId mesh, out uint vertexCount, out uint triangleCount);
        [DllImport(Lib)] public static extern TrocarStatus trocar_mesh_read_positions(TrocarContextHandle ctx, TrocarMeshId mesh, uint firstVertex, float* outXyz, uint vertexCount);
        [DllImport(Lib)] public static extern TrocarQuery trocar_default_query();
        [DllImport(Lib)] public static extern TrocarStatus trocar_query_static(TrocarContextHandle ctx, TrocarMeshId mesh, ref TrocarTool tool, TrocarVolume volume, TrocarResultsHandle results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_query_dynamic(TrocarContextHandle ctx, TrocarMeshId mesh, ref TrocarTool tool, ref TrocarVec3 newTip, TrocarVolume volume, TrocarResultsHandle results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_query_batch(TrocarContextHandle ctx, TrocarQuery* queries, uint count, TrocarResultsHandle results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_query_submit(TrocarContextHandle ctx, TrocarQuery* queries, uint count, TrocarResultsHandle results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_create(TrocarContextHandle ctx, out TrocarResultsHandle results);
        [DllImport(Lib)] public static extern void trocar_results_destroy(IntPtr results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_query_count(TrocarResultsHandle results, out uint count);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_backend(TrocarResultsHandle results, out TrocarBackend backend);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_hits(TrocarResultsHandle results, uint queryIndex, out TrocarHit* hits, out uint count);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_contact(TrocarResultsHandle results, uint queryIndex, out TrocarContact contact);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_feedback(TrocarResultsHandle results, uint queryIndex, out float* xyz, out uint vertexCount);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_wait(TrocarContextHandle ctx, TrocarResultsHandle results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_results_is_pending(TrocarResultsHandle results, out uint pending);
        [DllImport(Lib)] public static extern IntPtr trocar_status_name(TrocarStatus status);
        [DllImport(Lib)] public static extern uint trocar_version();
        [DllImport(Lib)] public static extern TrocarTrackerDef trocar_default_tracker_def();
        [DllImport(Lib)] public static extern TrocarStatus trocar_tracker_create(TrocarContextHandle ctx, TrocarMeshId mesh, ref TrocarTrackerDef def, out TrocarTrackerHandle tracker);
        [DllImport(Lib)] public static extern void trocar_tracker_destroy(IntPtr tracker);
        [DllImport(Lib)] public static extern TrocarStatus trocar_tracker_update(TrocarTrackerHandle tracker, ref TrocarTool tool, TrocarContact* contacts, uint capacity, out uint count);
        [DllImport(Lib)] public static extern TrocarStatus trocar_tracker_strip(TrocarTrackerHandle tracker, uint segment, out TrocarContact* contacts, out uint count);
        [DllImport(Lib)] public static extern TrocarStatus trocar_tracker_reseed(TrocarTrackerHandle tracker, TrocarResultsHandle results, uint queryIndex);
        [DllImport(Lib)] public static extern TrocarStatus trocar_ccd_vertex_face(double* points, double minSeparation, out double timeOfImpact, out uint collides);
        [DllImport(Lib)] public static extern TrocarStatus trocar_ccd_edge_edge(double* points, double minSeparation, out double timeOfImpact, out uint collides);
        [DllImport(Lib)] public static extern TrocarCcdDef trocar_default_ccd_def();
        [DllImport(Lib)] public static extern TrocarStatus trocar_ccd_results_create(TrocarContextHandle ctx, out TrocarCcdResultsHandle results);
        [DllImport(Lib)] public static extern void trocar_ccd_results_destroy(IntPtr results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_query_ccd(TrocarContextHandle ctx, TrocarMeshId meshA, TrocarMeshId meshB, ref TrocarCcdDef def, TrocarCcdResultsHandle results);
        [DllImport(Lib)] public static extern TrocarStatus trocar_ccd_results_contacts(TrocarCcdResultsHandle results, out TrocarCcdContact* contacts, out uint count);

        static bool s_checked;
        static readonly object s_lock = new object();

        /// <summary>Throws TrocarVersionException unless the packed version `found` is compatible with
        /// major.minor: same major and, for 0.x, the same minor.</summary>
        public static void CheckVersion(uint found, uint major, uint minor)
        {
            uint fMajor = (found >> 16) & 0xFF, fMinor = (found >> 8) & 0xFF, fPatch = found & 0xFF;
            if (fMajor != major || (major == 0 && fMinor != minor))
                throw new TrocarVersionException(string.Format(
                    "trocar: the native library is version {0}.{1}.{2}, this binding was written for {3}.{4} (needs the same "
                    + "major{5}); use the matching library and binding", fMajor, fMinor, fPatch, major, minor,
                    major == 0 ? " and, for 0.x, the same minor" : ""));
        }

        /// <summary>Checks the loaded library's version once (called before the first context or CCD test).</summary>
        public static void EnsureCompatible()
        {
            lock (s_lock)
            {
                if (s_checked) return;
                CheckVersion(trocar_version(), VersionMajor, VersionMinor);
                s_checked = true;
            }
        }

        public static string StatusName(TrocarStatus status)
        {
            return Marshal.PtrToStringAnsi(trocar_status_name(status));
        }

        /// <summary>This thread's last failure message.</summary>
        public static string LastErrorMessage()
        {
            int n = (int)trocar_last_error_message(null, UIntPtr.Zero);
            var buf = new byte[n + 1];
            fixed (byte* p = buf) trocar_last_error_message(p, (UIntPtr)(uint)buf.Length);
            return Encoding.UTF8.GetString(buf, 0, n);
        }

        public static void Check(TrocarStatus status, string what)
        {
            if (status != TrocarStatus.Ok) throw new TrocarException(status, what, LastErrorMessage());
        }
    }

    public sealed class TrocarContextHandle : SafeHandle
    {
        public TrocarContextHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle()
        {
            Native.trocar_context_destroy(handle);
            return true;
        }
    }

    public sealed class TrocarResultsHandle : SafeHandle
    {
        public TrocarResultsHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle()
        {
            Native.trocar_results_destroy(handle);
            return true;
        }
    }

    public sealed class TrocarTrackerHandle : SafeHandle
    {
        public TrocarTrackerHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle()
        {
            Native.trocar_tracker_destroy(handle);
            return true;
        }
    }

    public sealed class TrocarCcdResultsHandle : SafeHandle
    {
        public TrocarCcdResultsHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle()
        {
            Native.trocar_ccd_results_destroy(handle);
            return true;
        }
    }

    /// <summary>A zero-copy view of one query's hits, for runtimes without Span (valid until the next query).</summary>
    public unsafe struct TrocarHitView
    {
        readonly TrocarHit* _hits;
        readonly int _count;
        internal TrocarHitView(TrocarHit* hits, int count) { _hits = hits; _count = count; }
        public int Count { get { return _count; } }
        public TrocarHit this[int i]
        {
            get
            {
                if ((uint)i >= (uint)_count) throw new IndexOutOfRangeException();
                return _hits[i];
            }
        }
        public TrocarHit[] ToArray()
        {
            var a = new TrocarHit[_count];
            for (int i = 0; i < _count; i++) a[i] = _hits[i];
            return a;
        }
    }

    /// <summary>A TrocarContext with its meshes. Dispose() destroys it; it must not run concurrently with other calls.</summary>
    public sealed unsafe class TrocarContext : IDisposable
    {
        public readonly TrocarContextHandle Handle;

        public TrocarContext(TrocarBackend backend = TrocarBackend.Auto, uint cpuThreads = 0, bool allowSoftwareGpu = false)
        {
            Native.EnsureCompatible();
            var def = Native.trocar_default_context_def();
            def.Backend = backend;
            def.CpuThreads = cpuThreads;
            def.AllowSoftwareGpu = allowSoftwareGpu ? 1u : 0u;
            TrocarContextHandle h;
            Native.Check(Native.trocar_context_create(ref def, out h), "trocar_context_create");
            Handle = h;
        }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>Cpu or Gpu, or Auto for an Auto context holding both (TrocarResults.Backend then says which one
        /// ran a batch).</summary>
        public TrocarBackend Backend { get { return Native.trocar_context_backend(Handle); } }

        public string DeviceName
        {
            get
            {
                int n = (int)Native.trocar_context_device_name(Handle, null, UIntPtr.Zero);
                var buf = new byte[n + 1];
                fixed (byte* p = buf) Native.trocar_context_device_name(Handle, p, (UIntPtr)(uint)buf.Length);
                return Encoding.UTF8.GetString(buf, 0, n);
            }
        }

        public TrocarResults CreateResults() { return new TrocarResults(this); }

        static uint Triples(int length, string what)
        {
            if (length % 3 != 0) throw new ArgumentException(what + ": not a whole number of triples");
            return (uint)(length / 3);
        }

        /// <summary>Uploads xyz positions (3 floats a vertex) and index triples.</summary>
        public TrocarMeshId CreateMesh(float[] positionsXyz, uint[] indices)
        {
            TrocarMeshId id;
            uint nv = Triples(positionsXyz.Length, "positions"), nt = Triples(indices.Length, "indices");
            fixed (float* p = positionsXyz)
            fixed (uint* i = indices)
                Native.Check(Native.trocar_mesh_create(Handle, p, nv, i, nt, out id), "trocar_mesh_create");
            return id;
        }

        public void UpdatePositions(TrocarMeshId mesh, uint firstVertex, float[] positionsXyz)
        {
            uint n = Triples(positionsXyz.Length, "positions");
            fixed (float* p = positionsXyz)
                Native.Check(Native.trocar_mesh_update_positions(Handle, mesh, firstVertex, p, n),
                             "trocar_mesh_update_positions");
        }

        public void SetTriangles(TrocarMeshId mesh, uint[] indices)
        {
            uint n = Triples(indices.Length, "indices");
            fixed (uint* i = indices)
                Native.Check(Native.trocar_mesh_set_triangles(Handle, mesh, i, n), "trocar_mesh_set_triangles");
        }

        /// <summary>Replaces the mesh's vertices and triangles at once, keeping its id (a cut that adds
        /// vertices; all or nothing). Its trackers and its CCD step start over.</summary>
        public void SetTopology(TrocarMeshId mesh, float[] positionsXyz, uint[] indices)
        {
            uint nv = Triples(positionsXyz.Length, "positions");
            uint nt = Triples(indices.Length, "indices");
            fixed (float* p = positionsXyz)
            fixed (uint* i = indices)
                Native.Check(Native.trocar_mesh_set_topology(Handle, mesh, p, nv, i, nt), "trocar_mesh_set_topology");
        }

        public void DestroyMesh(TrocarMeshId mesh)
        {
            Native.Check(Native.trocar_mesh_destroy(Handle, mesh), "trocar_mesh_destroy");
        }

        public void MeshCounts(TrocarMeshId mesh, out uint vertexCount, out uint triangleCount)
        {
            Native.Check(Native.trocar_mesh_counts(Handle, mesh, out vertexCount, out triangleCount), "trocar_mesh_counts");
        }

        public float[] ReadPositions(TrocarMeshId mesh)
        {
            uint nv, nt;
            MeshCounts(mesh, out nv, out nt);
            var out_ = new float[3 * nv];
            fixed (float* p = out_)
                Native.Check(Native.trocar_mesh_read_positions(Handle, mesh, 0, p, nv), "trocar_mesh_read_positions");
            return out_;
        }

        public void QueryStatic(TrocarMeshId mesh, TrocarTool tool, TrocarVolume volume, TrocarResults results)
        {
            Native.Check(Native.trocar_query_static(Handle, mesh, ref tool, volume, results.Handle), "trocar_query_static");
        }

        public void QueryDynamic(TrocarMeshId mesh, TrocarTool tool, TrocarVec3 newTip, TrocarVolume volume,
                                 TrocarResults results)
        {
            Native.Check(Native.trocar_query_dynamic(Handle, mesh, ref tool, ref newTip, volume, results.Handle),
                         "trocar_query_dynamic");
        }

        public static TrocarQuery MakeQuery(TrocarMeshId mesh, TrocarTool tool, bool dynamic, TrocarVec3 newTip,
                                            TrocarVolume volume, bool hitsOnly = false)
        {
            var q = Native.trocar_default_query();
            q.Mesh = mesh;
            q.Tool = tool;
            q.Dynamic = dynamic ? 1u : 0u;
            q.NewTip = newTip;
            q.Volume = volume;
            q.HitsOnly = hitsOnly ? 1u : 0u;
            return q;
        }

        public void QueryBatch(TrocarQuery[] queries, TrocarResults results)
        {
            fixed (TrocarQuery* q = queries)
                Native.Check(Native.trocar_query_batch(Handle, q, (uint)queries.Length, results.Handle), "trocar_query_batch");
        }

        public void Submit(TrocarQuery[] queries, TrocarResults results)
        {
            fixed (TrocarQuery* q = queries)
                Native.Check(Native.trocar_query_submit(Handle, q, (uint)queries.Length, results.Handle), "trocar_query_submit");
        }

        public void Wait(TrocarResults results)
        {
            Native.Check(Native.trocar_results_wait(Handle, results.Handle), "trocar_results_wait");
        }

        /// <summary>A haptic-rate tracker of `mesh`; 0 keeps the default (4 segments, strips of up to 32).</summary>
        public TrocarTracker CreateTracker(TrocarMeshId mesh, uint segmentCount = 0, uint maxStripLength = uint.MaxValue)
        {
            return new TrocarTracker(this, mesh, segmentCount, maxStripLength);
        }

        /// <summary>Every contact between the two meshes' motions over the step into `results`.</summary>
        public void QueryCcd(TrocarMeshId meshA, TrocarMeshId meshB, TrocarCcdResults results, double minSeparation = 0.0,
                             bool edgeEdge = true, TrocarCcdCulling culling = TrocarCcdCulling.Bvh)
        {
            var def = Native.trocar_default_ccd_def();
            def.MinSeparation = minSeparation;
            def.EdgeEdge = edgeEdge ? 1u : 0u;
            def.Culling = (uint)culling;
            Native.Check(Native.trocar_query_ccd(Handle, meshA, meshB, ref def, results.Handle), "trocar_query_ccd");
        }
    }

    /// <summary>Maciel &amp; De's dynamic points on one mesh, updated at haptic rate. Update and Strip run on one thread
    /// at a time, Reseed on any; Dispose() destroys it. It may outlive its mesh or context (then: stale handle).</summary>
    public sealed unsafe class TrocarTracker : IDisposable
    {
        public readonly TrocarTrackerHandle Handle;
        public readonly uint SegmentCount;
        public readonly uint MaxStripLength;
        readonly TrocarContact[] _contacts;

        public TrocarTracker(TrocarContext context, TrocarMeshId mesh, uint segmentCount = 0, uint maxStripLength = uint.MaxValue)
        {
            var def = Native.trocar_default_tracker_def();
            if (segmentCount != 0) def.SegmentCount = segmentCount;
            if (maxStripLength != uint.MaxValue) def.MaxStripLength = maxStripLength;
            TrocarTrackerHandle h;
            Native.Check(Native.trocar_tracker_create(context.Handle, mesh, ref def, out h), "trocar_tracker_create");
            Handle = h;
            SegmentCount = def.SegmentCount;
            MaxStripLength = def.MaxStripLength;
            _contacts = new TrocarContact[def.SegmentCount];
        }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>Moves the tool; one contact per segment (entry to tip) in an array the tracker reuses (no
        /// allocation per update; copy what must outlive the next update). Empty for a mesh without triangles.</summary>
        public ArraySegment<TrocarContact> Update(TrocarTool tool)
        {
            uint n;
            fixed (TrocarContact* c = _contacts)
            {
                Native.Check(Native.trocar_tracker_update(Handle, ref tool, c, (uint)_contacts.Length, out n), "trocar_tracker_update");
            }
            return new ArraySegment<TrocarContact>(_contacts, 0, (int)n);
        }

        /// <summary>A copy of segment `segment`'s closest strip from the last update (every triangle checked exactly;
        /// empty when the segment was not in contact).</summary>
        public TrocarContact[] Strip(uint segment)
        {
            TrocarContact* c;
            uint n;
            Native.Check(Native.trocar_tracker_strip(Handle, segment, out c, out n), "trocar_tracker_strip");
            var a = new TrocarContact[n];
            for (int i = 0; i < n; i++) a[i] = c[i];
            return a;
        }

        /// <summary>Offers the hits of query `queryIndex` of `results` (any query on this mesh: static or dynamic,
        /// capsule or frustum) as starting points.</summary>
        public void Reseed(TrocarResults results, uint queryIndex = 0)
        {
            Native.Check(Native.trocar_tracker_reseed(Handle, results.Handle, queryIndex), "trocar_tracker_reseed");
        }
    }

    /// <summary>The contacts of the last QueryCcd, reused across steps; Dispose() destroys it.</summary>
    public sealed unsafe class TrocarCcdResults : IDisposable
    {
        public readonly TrocarCcdResultsHandle Handle;

        public TrocarCcdResults(TrocarContext context)
        {
            TrocarCcdResultsHandle h;
            Native.Check(Native.trocar_ccd_results_create(context.Handle, out h), "trocar_ccd_results_create");
            Handle = h;
        }

        public void Dispose() { Handle.Dispose(); }

        /// <summary>A copy of the last query's contacts, sorted by time of impact.</summary>
        public TrocarCcdContact[] Contacts()
        {
            TrocarCcdContact* c;
            uint n;
            Native.Check(Native.trocar_ccd_results_contacts(Handle, out c, out n), "trocar_ccd_results_contacts");
            var a = new TrocarCcdContact[n];
            for (int i = 0; i < n; i++) a[i] = c[i];
            return a;
        }
    }

    /// <summary>The conservative primitive CCD tests, in double precision, points in the CCD benchmark's order.</summary>
    public static unsafe class TrocarCcd
    {
        static bool Run(bool edgeEdge, double[] points, double minSeparation, out double timeOfImpact)
        {
            if (points == null || points.Length != 24) throw new ArgumentException("8 points (24 doubles) expected", "points");
            Native.EnsureCompatible();
            uint collides;
            fixed (double* p = points)
            {
                if (edgeEdge)
                    Native.Check(Native.trocar_ccd_edge_edge(p, minSeparation, out timeOfImpact, out collides), "trocar_ccd_edge_edge");
                else
                    Native.Check(Native.trocar_ccd_vertex_face(p, minSeparation, out timeOfImpact, out collides), "trocar_ccd_vertex_face");
            }
            return collides != 0;
        }

        /// <summary>Does a vertex moving linearly meet a moving triangle during the step? Never false where it does;
        /// `timeOfImpact` is a lower bound of the first contact (1 when none).</summary>
        public static bool VertexFace(double[] points, double minSeparation, out double timeOfImpact)
        {
            return Run(false, points, minSeparation, out timeOfImpact);
        }

        /// <summary>Do two edges moving linearly meet during the step? As VertexFace.</summary>
        public static bool EdgeEdge(double[] points, double minSeparation, out double timeOfImpact)
        {
            return Run(true, points, minSeparation, out timeOfImpact);
        }
    }

    /// <summary>A TrocarResults, reused across queries; views are valid until the next query or Dispose().</summary>
    public sealed unsafe class TrocarResults : IDisposable
    {
        public readonly TrocarResultsHandle Handle;

        public TrocarResults(TrocarContext context)
        {
            TrocarResultsHandle h;
            Native.Check(Native.trocar_results_create(context.Handle, out h), "trocar_results_create");
            Handle = h;
        }

        public void Dispose() { Handle.Dispose(); }

        public uint QueryCount
        {
            get
            {
                uint n;
                Native.Check(Native.trocar_results_query_count(Handle, out n), "trocar_results_query_count");
                return n;
            }
        }

        /// <summary>The backend that ran the last batch or query into this object: Cpu or Gpu, never Auto; readable
        /// while a batch is pending. Throws TrocarException ErrorOutOfRange before the first batch (or after one the
        /// backend failed).</summary>
        public TrocarBackend Backend
        {
            get
            {
                TrocarBackend b;
                Native.Check(Native.trocar_results_backend(Handle, out b), "trocar_results_backend");
                return b;
            }
        }

        public bool IsPending
        {
            get
            {
                uint p;
                Native.Check(Native.trocar_results_is_pending(Handle, out p), "trocar_results_is_pending");
                return p != 0;
            }
        }

        /// <summary>The query's contact for the tool side: the tool at the end of the step measured by the tracker's
        /// rule (penetration = the tip's depth below the nearest surface + radius when inside; the force on the tool
        /// along -Normal). Triangle == TrocarContact.NoTriangle and Penetration 0 when the tool touches nothing.
        /// Read it before the mesh changes (ErrorStaleHandle after).</summary>
        public TrocarContact Contact(uint queryIndex = 0)
        {
            TrocarContact c;
            Native.Check(Native.trocar_results_contact(Handle, queryIndex, out c), "trocar_results_contact");
            return c;
        }

        public TrocarHitView HitsView(uint queryIndex = 0)
        {
            TrocarHit* hits;
            uint n;
            Native.Check(Native.trocar_results_hits(Handle, queryIndex, out hits, out n), "trocar_results_hits");
            return new TrocarHitView(hits, (int)n);
        }

#if !TROCAR_NO_SPAN
        public ReadOnlySpan<TrocarHit> Hits(uint queryIndex = 0)
        {
            TrocarHit* hits;
            uint n;
            Native.Check(Native.trocar_results_hits(Handle, queryIndex, out hits, out n), "trocar_results_hits");
            return n == 0 ? ReadOnlySpan<TrocarHit>.Empty : new ReadOnlySpan<TrocarHit>(hits, (int)n);
        }

        /// <summary>The feedback polygons' xyz triples, back to back (each hit's at FeedbackFirst).</summary>
        public ReadOnlySpan<TrocarVec3> Feedback(uint queryIndex = 0)
        {
            float* xyz;
            uint n;
            Native.Check(Native.trocar_results_feedback(Handle, queryIndex, out xyz, out n), "trocar_results_feedback");
            return n == 0 ? ReadOnlySpan<TrocarVec3>.Empty : new ReadOnlySpan<TrocarVec3>(xyz, (int)n);
        }
#endif
    }
}
