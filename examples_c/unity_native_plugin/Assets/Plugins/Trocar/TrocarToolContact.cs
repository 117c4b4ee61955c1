// TrocarToolContact: the contacts between a rigid laparoscopic tool and a (deforming) organ mesh, every physics
// step, through trocar's C ABI (bindings/csharp/Trocar.cs). package.sh puts this file, Trocar.cs, Trocar.asmdef and
// the native library into a Unity project; see README.md next to it.
//
// Frames. The organ's vertices are uploaded in the organ's local space and re-uploaded only when they change (a
// deformation), never transformed per step: the tool (entry point, tip, radius) is brought into that space instead.
// That is exact while the organ's localToWorldMatrix is a similarity (rotation, translation, uniform scale s, mirror
// included): the world capsule of radius r is the local capsule of radius r / s. Under non-uniform or skewed scale a
// round tool is not round in local space, so the component then uploads world-space vertices instead, again each
// step the mesh or the organ's transform changed, and says so once in the log.
//
// Threading. Everything runs on Unity's main thread (FixedUpdate); the contacts are read by other scripts on that
// thread. No callback crosses into managed code (IL2CPP-safe), and nothing here allocates per step once warmed up.

#if TROCAR_NO_SPAN
#error TrocarToolContact reads the results through ReadOnlySpan<T>: it needs Unity 2021.2 or newer (.NET Standard 2.1)
#endif

using System;
using System.Collections.Generic;
using UnityEngine;

namespace Trocar
{
    /// <summary>One triangle of the organ in contact with the tool, in world space.</summary>
    public struct ToolContact
    {
        /// <summary>Index of the triangle in the organ mesh's triangle list (Mesh.triangles / 3, submeshes in order).</summary>
        public int Triangle;
        /// <summary>Closest point on the organ.</summary>
        public Vector3 Point;
        /// <summary>Closest point on the tool's axis (static) or on the triangle its axis swept (dynamic).</summary>
        public Vector3 PointOnTool;
        /// <summary>Unit direction pushing the organ off the tool.</summary>
        public Vector3 Normal;
        /// <summary>Distance from the tool's axis (or swept axis) to the triangle, in world units.</summary>
        public float Distance;
        /// <summary>The triangle's outward unit normal (turned to the entry point's side, whatever the winding).</summary>
        public Vector3 FaceNormal;
        /// <summary>How far the tool at the end of the step reaches past the triangle's plane along -FaceNormal, in world
        /// units, not capped at the radius: a penalty force on the triangle is stiffness * Penetration along
        /// -FaceNormal, spread over its corners by Barycentric (docs/contact.md).</summary>
        public float Penetration;
        /// <summary>Weights of Point at the triangle's corners 0, 1, 2.</summary>
        public Vector3 Barycentric;
        /// <summary>Dynamic query: first t in [0, 1] of the step at which the tool touches the triangle; static: 0.</summary>
        public float TimeOfImpact;
        /// <summary>This contact's feedback polygon: FeedbackPoints[FeedbackFirst .. FeedbackFirst + FeedbackCount).</summary>
        public int FeedbackFirst, FeedbackCount;
    }

    /// <summary>The tool's own contact with the organ, in world space: what pushes the tool back (the force on it is
    /// stiffness * Penetration along PushOut), measured as trocar's haptic tracker measures it.</summary>
    public struct ToolSideContact
    {
        /// <summary>False when the tool touches nothing (the other fields are then zero).</summary>
        public bool InContact;
        /// <summary>Radius + the tip's depth below the nearest surface when the tip is inside; radius - distance when
        /// the tool's axis is outside. Not capped at the radius.</summary>
        public float Penetration;
        /// <summary>Unit direction that pushes the tool out of the organ.</summary>
        public Vector3 PushOut;
        /// <summary>The deepest point of the tool's axis (or its closest to the organ) and its nearest point on the organ.</summary>
        public Vector3 PointOnTool, PointOnOrgan;
        /// <summary>The organ triangle holding PointOnOrgan (-1 when not in contact).</summary>
        public int Triangle;
    }

    /// <summary>
    /// Queries trocar every FixedUpdate for the organ triangles the tool (entry point to tip, round, of radius
    /// Radius) touches, swept from the previous step's tip when DynamicQuery is on, and keeps them in Contacts
    /// (world space) until the next step. Errors go to the log with the library's message; they never throw.
    /// </summary>
    [DisallowMultipleComponent]
    [AddComponentMenu("Trocar/Trocar Tool Contact")]
    // After scripts of the default order (0) that move the tool or deform the organ in their FixedUpdate; scripts that
    // read Contacts in FixedUpdate need a later order (or read them in Update).
    [DefaultExecutionOrder(100)]
    public sealed class TrocarToolContact : MonoBehaviour
    {
        [Tooltip("The organ. Its mesh is uploaded once in the organ's local space (empty: this GameObject's MeshFilter).")]
        [SerializeField] MeshFilter organ;

        [Tooltip("Where the tool crosses the abdominal wall (the trocar); only its position is used.")]
        [SerializeField] Transform entryPoint;

        [Tooltip("The tool's tip. Its position is the tip; its up axis rolls the Frustum volume's square section.")]
        [SerializeField] Transform tip;

        [Tooltip("Tool radius in world units (a 5 mm instrument in a scene in metres: 0.0025).")]
        [SerializeField] float radius = 0.0025f;

        [Tooltip("Sweep the tool from the previous step's tip to this one, so a fast motion cannot pass through the " +
                 "organ between two steps. Off: the tool at rest at this step's pose.")]
        [SerializeField] bool dynamicQuery = true;

        [Tooltip("Capsule: the round tool. Frustum: the camera volumes of Lombardo et al. 1999.")]
        [SerializeField] TrocarVolume volume = TrocarVolume.Capsule;

        [Tooltip("Re-read the organ's vertices every FixedUpdate (a deforming organ). Off: call MarkOrganChanged() " +
                 "after changing them.")]
        [SerializeField] bool organDeforms = true;

        [Tooltip("Auto: a hardware GPU when there is one, else the CPU.")]
        [SerializeField] TrocarBackend backend = TrocarBackend.Auto;

        [Tooltip("Draw the tool's axis, the feedback polygons and the contact normals as gizmos.")]
        [SerializeField] bool drawGizmos = true;

        [SerializeField] Color gizmoColor = new Color(1f, 0.4f, 0f, 1f);

        // Native resources, created in OnEnable, released in OnDisable.
        TrocarContext m_context;
        TrocarResults m_results;
        TrocarMeshId m_mesh;
        bool m_hasMesh;

        // What the native mesh was made from, to know when to rebuild it or upload again.
        Mesh m_uploadedMesh;
        int m_uploadedVertexCount;
        bool m_organChanged;        // upload the positions at the next step
        bool m_rebuild;             // make the native mesh again (triangles changed)
        bool m_worldSpace;          // vertices uploaded in world space (the organ's transform is not a similarity)
        Matrix4x4 m_uploadedMatrix; // the organ's localToWorldMatrix at the last world-space upload

        // Reused buffers: no allocation per step.
        readonly List<Vector3> m_vertices = new List<Vector3>();
        float[] m_xyz = new float[0];
        readonly List<ToolContact> m_contacts = new List<ToolContact>();
        ToolSideContact m_toolSide = NoToolSide;
        readonly List<Vector3> m_feedback = new List<Vector3>();

        // The tip of the last step that was queried, in the frame of the uploaded vertices: the start of this step's
        // sweep. Failed steps leave it alone, so the first good step after them sweeps over the motion they missed.
        Vector3 m_previousTip;
        bool m_hasPreviousTip;

        string m_loggedError;
        bool m_warnedWorldSpace;

        /// <summary>The contacts of the last step, in world space (empty after an error).</summary>
        public IReadOnlyList<ToolContact> Contacts { get { return m_contacts; } }

        /// <summary>The tool's contact of the last step, for the force on the tool (not in contact after an error).</summary>
        public ToolSideContact ToolSide { get { return m_toolSide; } }

        /// <summary>The feedback polygons of the last step's contacts, in world space, back to back.</summary>
        public IReadOnlyList<Vector3> FeedbackPoints { get { return m_feedback; } }

        /// <summary>True while the native context and the organ's mesh exist.</summary>
        public bool IsReady { get { return m_context != null && m_hasMesh; } }

        /// <summary>The last error, as logged; null after a successful step.</summary>
        public string LastError { get; private set; }

        /// <summary>Steps whose query succeeded since the component was created.</summary>
        public int CompletedSteps { get; private set; }

        /// <summary>The backend the context runs on (the requested one while there is no context).</summary>
        public TrocarBackend ActiveBackend { get { return m_context != null ? m_context.Backend : backend; } }

        public MeshFilter Organ { get { return organ; } set { organ = value; m_rebuild = true; } }
        public Transform EntryPoint { get { return entryPoint; } set { entryPoint = value; ResetSweep(); } }
        public Transform Tip { get { return tip; } set { tip = value; ResetSweep(); } }
        public float Radius { get { return radius; } set { radius = value; } }
        public bool DynamicQuery { get { return dynamicQuery; } set { dynamicQuery = value; } }
        public TrocarVolume Volume { get { return volume; } set { volume = value; } }
        public bool OrganDeforms { get { return organDeforms; } set { organDeforms = value; } }

        /// <summary>Upload the organ's vertices at the next step (needed when OrganDeforms is off), and its triangles too
        /// when they changed (a cut); another Mesh or a new vertex count is noticed without this.</summary>
        public void MarkOrganChanged(bool trianglesChanged = false)
        {
            m_organChanged = true;
            if (trianglesChanged) m_rebuild = true;
        }

        /// <summary>Make the next step a static query (after teleporting the tool).</summary>
        public void ResetSweep() { m_hasPreviousTip = false; }

        void Awake()
        {
            if (organ == null) organ = GetComponent<MeshFilter>();
        }

        void OnEnable()
        {
            m_contacts.Clear();
            m_feedback.Clear();
            m_toolSide = NoToolSide;
            m_hasPreviousTip = false;
            try
            {
                m_context = new TrocarContext(backend);
                m_results = m_context.CreateResults();
            }
            catch (Exception e) when (IsLibraryError(e))
            {
                Fail(Describe(e));
                Release();
                return;
            }
            // The mesh now if the references are set; if they are not, or the upload fails, FixedUpdate tries again.
            try
            {
                float scale;
                Matrix4x4 toWorld;
                PrepareOrgan(out scale, out toWorld);
            }
            catch (Exception e) when (IsLibraryError(e))
            {
                Fail(Describe(e));
            }
        }

        void OnDisable() { Release(); }

        void OnDestroy() { Release(); }

        void Release()
        {
            // Destroying the context destroys its meshes; the results object is independent of it.
            if (m_results != null) m_results.Dispose();
            if (m_context != null) m_context.Dispose();
            m_results = null;
            m_context = null;
            m_hasMesh = false;
            m_uploadedMesh = null;
            m_contacts.Clear();
            m_feedback.Clear();
            m_toolSide = NoToolSide;
        }

        void FixedUpdate()
        {
            if (m_context == null) return; // OnEnable failed and said why
            try
            {
                float scale;
                Matrix4x4 toWorld;
                if (!PrepareOrgan(out scale, out toWorld)) return;
                Query(scale, toWorld);
                CompletedSteps++;
                LastError = null;
                m_loggedError = null;
            }
            catch (Exception e) when (IsLibraryError(e))
            {
                Fail(Describe(e));
            }
        }

        // Checks the references, then makes the native mesh or uploads the vertices, as far as they changed. Gives the
        // organ's transform and the world units per unit of the frame the vertices are in.
        bool PrepareOrgan(out float scale, out Matrix4x4 toWorld)
        {
            Mesh mesh;
            float uniform;
            scale = 0f;
            if (!Configured(out mesh, out toWorld, out uniform)) return false;
            bool world = uniform == 0f;
            if (!m_hasMesh || m_rebuild || mesh != m_uploadedMesh || mesh.vertexCount != m_uploadedVertexCount)
                BuildMesh(mesh, world, toWorld);
            else if (organDeforms || m_organChanged || world != m_worldSpace || (world && !toWorld.Equals(m_uploadedMatrix)))
                UploadPositions(mesh, world, toWorld);
            scale = world ? 1f : uniform;
            return true;
        }

        // Checks the references; on success gives the organ's mesh and transform, and its uniform scale (0: none, the
        // vertices go up in world space).
        bool Configured(out Mesh mesh, out Matrix4x4 toWorld, out float scale)
        {
            mesh = null;
            toWorld = Matrix4x4.identity;
            scale = 0f;
            if (organ == null) return Fail("no organ: set its MeshFilter (or put this component on the organ)");
            if (entryPoint == null || tip == null) return Fail("set both the entry point and the tip Transforms");
            mesh = organ.sharedMesh;
            if (mesh == null) return Fail("the organ's MeshFilter has no mesh");
            toWorld = organ.transform.localToWorldMatrix;
            scale = UniformScale(toWorld);
            if (scale == 0f && !m_warnedWorldSpace)
            {
                m_warnedWorldSpace = true;
                Debug.LogWarning(Prefix() + "the organ's scale is not uniform: its vertices are uploaded in world " +
                                 "space, again whenever it moves (uniform scale avoids that)", this);
            }
            return true;
        }

        // The uniform scale of a similarity transform, or 0 when the columns are not orthogonal and of one length.
        static float UniformScale(Matrix4x4 m)
        {
            Vector3 x = m.MultiplyVector(Vector3.right), y = m.MultiplyVector(Vector3.up), z = m.MultiplyVector(Vector3.forward);
            float s = x.magnitude;
            float tol = 1e-4f * s;
            bool similar = s > 0f
                && Math.Abs(y.magnitude - s) <= tol && Math.Abs(z.magnitude - s) <= tol
                && Math.Abs(Vector3.Dot(x, y)) <= tol * s && Math.Abs(Vector3.Dot(x, z)) <= tol * s
                && Math.Abs(Vector3.Dot(y, z)) <= tol * s;
            return similar ? s : 0f;
        }

        void BuildMesh(Mesh mesh, bool world, Matrix4x4 toWorld)
        {
            if (m_hasMesh)
            {
                m_hasMesh = false; // even if the destruction fails, the next step makes a new one
                m_context.DestroyMesh(m_mesh);
            }
            PackVertices(mesh, world, toWorld);
            // Rebuilding is rare (OnEnable, another mesh, a new vertex count): the index copy may allocate.
            int[] triangles = mesh.triangles;
            var indices = new uint[triangles.Length];
            for (int i = 0; i < triangles.Length; i++) indices[i] = (uint)triangles[i];
            m_mesh = m_context.CreateMesh(m_xyz, indices);
            m_hasMesh = true;
            m_rebuild = false;
            m_uploadedMesh = mesh;
            m_uploadedVertexCount = mesh.vertexCount;
        }

        void UploadPositions(Mesh mesh, bool world, Matrix4x4 toWorld)
        {
            PackVertices(mesh, world, toWorld);
            m_context.UpdatePositions(m_mesh, 0, m_xyz);
        }

        void PackVertices(Mesh mesh, bool world, Matrix4x4 toWorld)
        {
            mesh.GetVertices(m_vertices);
            int n = m_vertices.Count;
            if (m_xyz.Length != 3 * n) m_xyz = new float[3 * n];
            for (int i = 0; i < n; i++)
            {
                Vector3 p = world ? toWorld.MultiplyPoint3x4(m_vertices[i]) : m_vertices[i];
                m_xyz[3 * i] = p.x;
                m_xyz[3 * i + 1] = p.y;
                m_xyz[3 * i + 2] = p.z;
            }
            if (world != m_worldSpace) m_hasPreviousTip = false; // the previous tip is in the other frame
            m_worldSpace = world;
            m_uploadedMatrix = toWorld;
            m_organChanged = false;
        }

        // One query in the frame of the uploaded vertices (scale: world units per unit of that frame), its answers
        // brought back to world space.
        void Query(float scale, Matrix4x4 toWorld)
        {
            Matrix4x4 fromFrame = m_worldSpace ? Matrix4x4.identity : toWorld;
            Matrix4x4 toFrame = m_worldSpace ? Matrix4x4.identity : organ.transform.worldToLocalMatrix;
            Vector3 tipNow = toFrame.MultiplyPoint3x4(tip.position);
            bool sweep = dynamicQuery && m_hasPreviousTip;
            var tool = new TrocarTool(V(toFrame.MultiplyPoint3x4(entryPoint.position)), V(sweep ? m_previousTip : tipNow),
                                      radius / scale);
            tool.Up = V(toFrame.MultiplyVector(tip.up));
            // A failed query leaves no contacts: stale ones would go on pushing the organ.
            m_contacts.Clear();
            m_feedback.Clear();
            m_toolSide = NoToolSide;
            if (sweep) m_context.QueryDynamic(m_mesh, tool, V(tipNow), volume, m_results);
            else m_context.QueryStatic(m_mesh, tool, volume, m_results);
            m_previousTip = tipNow;
            m_hasPreviousTip = true;

            ReadOnlySpan<TrocarHit> hits = m_results.Hits();
            ReadOnlySpan<TrocarVec3> feedback = m_results.Feedback();
            for (int i = 0; i < hits.Length; i++)
            {
                TrocarHit h = hits[i];
                ToolContact c;
                c.Triangle = (int)h.Triangle;
                c.Point = fromFrame.MultiplyPoint3x4(U(h.PointOnMesh));
                c.PointOnTool = fromFrame.MultiplyPoint3x4(U(h.PointOnTool));
                c.Normal = fromFrame.MultiplyVector(U(h.Normal)).normalized;
                c.Distance = h.Distance * scale;
                c.FaceNormal = fromFrame.MultiplyVector(U(h.FaceNormal)).normalized;
                c.Penetration = h.Penetration * scale;
                c.Barycentric = U(h.Barycentric);
                c.TimeOfImpact = h.TimeOfImpact;
                c.FeedbackFirst = m_feedback.Count;
                c.FeedbackCount = (int)h.FeedbackCount;
                for (int k = 0; k < c.FeedbackCount; k++)
                    m_feedback.Add(fromFrame.MultiplyPoint3x4(U(feedback[(int)h.FeedbackFirst + k])));
                m_contacts.Add(c);
            }
            TrocarContact tc = m_results.Contact();
            if (tc.Triangle != TrocarContact.NoTriangle)
            {
                m_toolSide.InContact = true;
                m_toolSide.Penetration = tc.Penetration * scale;
                m_toolSide.PushOut = -fromFrame.MultiplyVector(U(tc.Normal)).normalized;
                m_toolSide.PointOnTool = fromFrame.MultiplyPoint3x4(U(tc.PointOnTool));
                m_toolSide.PointOnOrgan = fromFrame.MultiplyPoint3x4(U(tc.PointOnMesh));
                m_toolSide.Triangle = (int)tc.Triangle;
            }
        }

        static readonly ToolSideContact NoToolSide = new ToolSideContact { Triangle = -1 };

        void OnDrawGizmos()
        {
            if (!drawGizmos) return;
            Gizmos.color = gizmoColor;
            if (entryPoint != null && tip != null) Gizmos.DrawLine(entryPoint.position, tip.position);
            for (int i = 0; i < m_contacts.Count; i++)
            {
                ToolContact c = m_contacts[i];
                for (int k = 0; k < c.FeedbackCount; k++)
                    Gizmos.DrawLine(m_feedback[c.FeedbackFirst + k], m_feedback[c.FeedbackFirst + (k + 1) % c.FeedbackCount]);
                Gizmos.DrawLine(c.Point, c.Point - c.FaceNormal * c.Penetration);
            }
        }

        // The failures this component turns into log entries: the library's (status and message), a missing or
        // mismatched native library, and arguments the binding refuses.
        static bool IsLibraryError(Exception e)
        {
            return e is TrocarException || e is TrocarVersionException || e is DllNotFoundException
                || e is EntryPointNotFoundException || e is ArgumentException;
        }

        static string Describe(Exception e)
        {
            if (e is DllNotFoundException)
                return "the native library is missing (" + e.Message + "): copy libtrocar for this platform into " +
                       "Assets/Plugins (Plugins/x86_64/libtrocar.so, trocar.dll or libtrocar.dylib; see the README)";
            if (e is EntryPointNotFoundException)
                return "the native library lacks an entry point (" + e.Message + "): it does not match Trocar.cs";
            return e.Message;
        }

        // Logs an error once until a step succeeds again (FixedUpdate would repeat it 50 times a second) and drops
        // the contacts. Returns false, for the callers' convenience.
        bool Fail(string message)
        {
            m_contacts.Clear();
            m_feedback.Clear();
            m_toolSide = NoToolSide;
            LastError = message;
            if (message != m_loggedError)
            {
                m_loggedError = message;
                Debug.LogError(Prefix() + message, this);
            }
            return false;
        }

        string Prefix() { return "TrocarToolContact on '" + name + "': "; }

        static TrocarVec3 V(Vector3 v) { return new TrocarVec3(v.x, v.y, v.z); }

        static Vector3 U(TrocarVec3 v) { return new Vector3(v.X, v.Y, v.Z); }
    }
}
