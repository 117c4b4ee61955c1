// Test driver for the packaged Unity plug-in (run by run_test.sh): TrocarToolContact.cs and Trocar.cs compiled as
// Unity compiles them (their own assembly, unsafe code allowed) against the UnityEngine stand-in, and driven the
// way the engine drives a scene: fields deserialized, Awake, OnEnable, FixedUpdate steps, OnDrawGizmos, OnDisable,
// OnDestroy.
//
// The organ is the SOFA liver (centimetres) under a transform that rotates it, moves it and scales it to metres.
// Each step the driver asks the same question itself, through the binding, in the organ's local frame (or in world
// space while the organ's scale is not uniform), with the tool converted in double precision from the known
// transform, and requires the component's world-space contacts to be that answer brought back to world space.
// Along the way: contacts only while the tool is in the liver, the fast swing caught by the sweep only, deformation
// and cuts seen (or not, as documented), a zero radius logged with the library's message and not thrown, no
// allocation in a warmed-up step, and the native context released on OnDisable and OnDestroy.
//
// Usage: mono UnityPluginTest.exe <data-dir>   (reads <data-dir>/meshes/liver-smooth.obj)
// Exit status: 0 all checks passed, 1 otherwise.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using Trocar;
using UnityEngine;

static class UnityPluginTest
{
    const float Radius = 0.0025f;     // m: a 5 mm instrument
    const double Band = 1e-5;         // m: triangles this close to the tool's boundary may differ by float rounding
    const double PointTol = 1e-5;     // m
    const double DistanceTol = 1e-6;  // m

    static int s_checks, s_failures;

    static bool Check(bool ok, string fmt, params object[] args)
    {
        s_checks++;
        if (!ok)
        {
            s_failures++;
            if (s_failures <= 60) Console.WriteLine("FAIL: " + string.Format(CultureInfo.InvariantCulture, fmt, args));
        }
        return ok;
    }

    // ---- the scene ---------------------------------------------------------------------------------------------

    static float[] s_rest;          // the liver's local vertices, xyz
    static uint[] s_triangles;
    static Mesh s_mesh;
    static Transform s_organ, s_entry, s_tip;
    static TrocarToolContact s_tool;
    static Action s_fixedUpdate;

    // ---- the driver's own answer ---------------------------------------------------------------------------------

    // The positions the component works from (local, as uploaded) and the triangles it was given; kept apart from
    // the Mesh, because the component does not see every change at once (OrganDeforms off).
    static float[] s_seenPositions;
    static uint[] s_seenTriangles;
    static TrocarContext s_ref;
    static TrocarResults s_refResults;
    static TrocarMeshId s_refMesh;
    static uint[] s_refMeshTriangles;
    static double[] s_refPreviousTip; // in the frame of the previous step's query
    static bool s_refSweep;           // the component's next step sweeps (it has a previous tip)
    static bool s_refWorldSpace;

    enum Expect { None, Some, Any }

    static int Main(string[] args)
    {
        string obj = Path.Combine(args[0], "meshes", "liver-smooth.obj");
        LoadObj(obj, out s_rest, out s_triangles);
        Console.WriteLine("liver: {0} vertices, {1} triangles", s_rest.Length / 3, s_triangles.Length / 3);

        double[] lo, hi, c;
        Bounds(s_rest, out lo, out hi, out c);
        double surface = SurfaceHeight(s_rest, s_triangles, c[0], c[2]);
        double mid = 0.5 * (lo[1] + hi[1]);

        // The organ: rotated, moved, centimetres to metres.
        var liver = new GameObject("Liver");
        s_mesh = new Mesh { name = "liver-smooth", vertices = ToVector3(s_rest), triangles = ToInt(s_triangles) };
        var filter = liver.AddComponent<MeshFilter>();
        filter.sharedMesh = s_mesh;
        s_organ = liver.transform;
        s_organ.position = new Vector3(0.4f, 0.95f, -0.2f);
        s_organ.rotation = Quaternion.AngleAxis(35f, new Vector3(1f, 2f, 0.5f));
        s_organ.localScale = new Vector3(0.01f, 0.01f, 0.01f);

        s_entry = new GameObject("Trocar").transform;
        s_entry.position = World(c[0], hi[1] + 8, c[2]);
        s_tip = new GameObject("Tip").transform;
        s_tip.rotation = Quaternion.AngleAxis(20f, new Vector3(0f, 0f, 1f)); // rolls the frustum's section

        // The tool, loaded as from a scene.
        var toolObject = new GameObject("Tool");
        s_tool = PlayerLoop.Load<TrocarToolContact>(toolObject, new Dictionary<string, object>
        {
            { "organ", filter }, { "entryPoint", s_entry }, { "tip", s_tip }, { "radius", Radius },
            { "dynamicQuery", true }, { "volume", TrocarVolume.Capsule }, { "organDeforms", true },
            { "backend", TrocarBackend.Auto }, { "drawGizmos", true },
        });
        Check(s_tool.IsReady, "not ready after Awake and OnEnable: {0}", s_tool.LastError);
        Check(Debug.entries.Count == 0, "Awake/OnEnable logged something");
        s_fixedUpdate = PlayerLoop.Bind(s_tool, "FixedUpdate");
        Console.WriteLine("backend: {0}", s_tool.ActiveBackend);

        s_ref = new TrocarContext(s_tool.ActiveBackend, 0, true);
        s_refResults = s_ref.CreateResults();
        s_seenPositions = (float[])s_rest.Clone();
        s_seenTriangles = (uint[])s_triangles.Clone();

        // A poke along the vertical through the centroid, a pull back out.
        Step("far", c[0], hi[1] + 6, c[2], Expect.None);
        Step("far, swept", c[0], hi[1] + 5, c[2], Expect.None);
        Step("approach", c[0], surface + 1, c[2], Expect.Any);
        Step("at the surface", c[0], surface + 0.1, c[2], Expect.Some);
        Step("in the liver", c[0], surface - 1, c[2], Expect.Some);
        Step("in the liver, at rest", c[0], surface - 1, c[2], Expect.Some);
        Step("pulled out, swept through the surface", c[0], hi[1] + 3, c[2], Expect.Some);
        Step("out", c[0], hi[1] + 3, c[2], Expect.None);

        // The fast swing under the entry point: both ends clear of the liver, the sweep through it.
        double[] left = { lo[0] - 3, mid, c[2] }, right = { hi[0] + 3, mid, c[2] };
        Step("to the left", left[0], left[1], left[2], Expect.Any);
        Step("left, at rest", left[0], left[1], left[2], Expect.None);
        Step("fast swing", right[0], right[1], right[2], Expect.Some);
        for (int i = 0; i < s_tool.Contacts.Count; i++)
            Check(s_tool.Contacts[i].TimeOfImpact > 0f, "fast swing: triangle {0} touched at t = {1}, the step starts clear",
                  s_tool.Contacts[i].Triangle, s_tool.Contacts[i].TimeOfImpact);
        Check(StaticHits(left) == 0 && StaticHits(right) == 0, "fast swing: a static query at an end hits the liver");
        Step("right, at rest", right[0], right[1], right[2], Expect.None);
        Step("back up", c[0], hi[1] + 5, c[2], Expect.Any);
        Step("up, at rest", c[0], hi[1] + 5, c[2], Expect.None);

        CheckGizmos(c, surface);
        Deformation(c, surface);
        Frustum(c, surface);
        NonUniformScale(c, surface, hi);
        BadRadius(c, surface);
        Allocations(c, surface);
        Lifecycle(c, surface);
        Unconfigured(filter, c, surface);
        CheckLog();

        s_refResults.Dispose();
        s_ref.Dispose();
        Check(s_toolSideSteps > 0, "no step had the tool in contact on its own side");
        Console.WriteLine("{0} steps with a tool side contact", s_toolSideSteps);
        Console.WriteLine("{0} checks, {1} failures", s_checks, s_failures);
        return s_failures == 0 ? 0 : 1;
    }

    // ---- scenarios ------------------------------------------------------------------------------------------------

    // The organ's mesh deformed (raised 0.5 cm): seen at the next step while OrganDeforms is on; with it off, only
    // after MarkOrganChanged. A cut (half the triangles) is seen after MarkOrganChanged(true).
    static void Deformation(double[] c, double surface)
    {
        Step("above the surface", c[0], surface + 0.6, c[2], Expect.Any);
        Step("above the surface, at rest", c[0], surface + 0.6, c[2], Expect.None);

        float[] raised = (float[])s_rest.Clone();
        for (int i = 1; i < raised.Length; i += 3) raised[i] += 0.5f;
        s_mesh.vertices = ToVector3(raised);
        s_seenPositions = raised;
        Step("liver raised under the tool", c[0], surface + 0.6, c[2], Expect.Some);

        s_tool.OrganDeforms = false;
        s_mesh.vertices = ToVector3(s_rest);
        Step("liver lowered, OrganDeforms off: not seen", c[0], surface + 0.6, c[2], Expect.Some);
        s_tool.MarkOrganChanged();
        s_seenPositions = (float[])s_rest.Clone();
        Step("liver lowered, MarkOrganChanged", c[0], surface + 0.6, c[2], Expect.None);
        s_tool.OrganDeforms = true;

        Step("in the liver", c[0], surface - 1, c[2], Expect.Some);
        var even = new List<uint>();
        for (int t = 0; t < s_triangles.Length / 3; t += 2)
            for (int k = 0; k < 3; k++) even.Add(s_triangles[3 * t + k]);
        s_mesh.triangles = ToInt(even.ToArray());
        s_tool.MarkOrganChanged(true);
        s_seenTriangles = even.ToArray();
        Step("half the triangles cut away", c[0], surface - 1, c[2], Expect.Some);
        int cut = s_tool.Contacts.Count;
        s_mesh.triangles = ToInt(s_triangles);
        s_tool.MarkOrganChanged(true);
        s_seenTriangles = (uint[])s_triangles.Clone();
        Step("triangles restored", c[0], surface - 1, c[2], Expect.Some);
        Check(s_tool.Contacts.Count > cut, "the cut did not change the contacts ({0} with all triangles, {1} with half)",
              s_tool.Contacts.Count, cut);
    }

    static void Frustum(double[] c, double surface)
    {
        s_tool.Volume = TrocarVolume.Frustum;
        Step("frustum, into the liver", c[0], surface - 0.5, c[2], Expect.Some);
        Step("frustum, at rest", c[0], surface - 0.5, c[2], Expect.Some);
        s_tool.Volume = TrocarVolume.Capsule;
    }

    // Non-uniform scale: world-space vertices, uploaded again when the organ moves; uniform again: local space.
    static void NonUniformScale(double[] c, double surface, double[] hi)
    {
        s_organ.localScale = new Vector3(0.01f, 0.013f, 0.01f);
        Step("non-uniform scale, in the liver", c[0], surface - 1, c[2], Expect.Some);
        Check(CountLog(LogType.Warning, "not uniform") == 1, "no single warning about the non-uniform scale");
        Step("non-uniform scale, at rest", c[0], surface - 1, c[2], Expect.Some);
        s_organ.position = s_organ.position + new Vector3(0.004f, 0f, 0f);
        Step("non-uniform scale, the organ moved", c[0], surface - 1.2, c[2], Expect.Some);
        Step("non-uniform scale, out", c[0], hi[1] + 5, c[2], Expect.Any);
        s_organ.localScale = new Vector3(0.01f, 0.01f, 0.01f);
        Step("uniform scale again", c[0], surface - 1, c[2], Expect.Some);
        Check(CountLog(LogType.Warning, "not uniform") == 1, "the non-uniform scale warning repeats");
    }

    // A zero radius: the library refuses it, the component logs its message once, keeps no contacts, and recovers.
    // The tip moves meanwhile: the first good step sweeps from where the last good one ended.
    static void BadRadius(double[] c, double surface)
    {
        s_tool.Radius = 0f;
        for (int i = 0; i < 3; i++)
        {
            SetTip(c[0] + 0.5 * i, surface - 1, c[2]);
            try { s_fixedUpdate(); }
            catch (Exception e) { Check(false, "radius 0: FixedUpdate threw {0}", e); }
        }
        Check(s_tool.Contacts.Count == 0, "radius 0: {0} contacts kept", s_tool.Contacts.Count);
        Check(s_tool.LastError != null && s_tool.LastError.Contains("radius must be > 0"),
              "radius 0: LastError is '{0}', not the library's message", s_tool.LastError);
        Check(CountLog(LogType.Error, "radius must be > 0") == 1, "radius 0: logged {0} times over 3 steps, not once",
              CountLog(LogType.Error, "radius must be > 0"));
        s_tool.Radius = Radius;
        // Swept from the last tip queried, before the failures.
        Step("radius restored", c[0] - 0.5, surface - 1, c[2], Expect.Some);
        Check(s_tool.LastError == null, "LastError stays after a good step: {0}", s_tool.LastError);
    }

    // A warmed-up step (deforming organ, swept query, contacts) allocates nothing on the managed heap.
    static void Allocations(double[] c, double surface)
    {
        Vector3 a = World(c[0], surface - 0.8, c[2]), b = World(c[0] + 0.3, surface - 1.1, c[2] + 0.2);
        for (int i = 0; i < 6; i++)
        {
            s_tip.position = i % 2 == 0 ? a : b;
            s_fixedUpdate();
        }
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 20; i++)
        {
            s_tip.position = i % 2 == 0 ? a : b;
            s_fixedUpdate();
        }
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Check(s_tool.Contacts.Count > 0, "allocation check: no contacts, the check would prove little");
        Check(allocated == 0, "20 warmed-up steps allocated {0} bytes", allocated);
        s_refPreviousTip = Frame(b);
        s_refSweep = true;
    }

    // OnDisable releases the native context and results; OnEnable makes them again; DestroyImmediate releases them.
    static void Lifecycle(double[] c, double surface)
    {
        SafeHandle[] handles = NativeHandles(s_tool);
        Check(handles[0] != null && !handles[0].IsClosed && handles[1] != null && !handles[1].IsClosed,
              "no live context and results before OnDisable");
        s_tool.enabled = false;
        Check(handles[0].IsClosed && handles[1].IsClosed, "OnDisable left the context or the results open");
        Check(!s_tool.IsReady && s_tool.Contacts.Count == 0, "disabled, yet ready or with contacts");
        s_tool.enabled = true;
        s_refSweep = false;
        Check(s_tool.IsReady, "OnEnable after OnDisable: not ready: {0}", s_tool.LastError);
        Step("enabled again", c[0], surface - 1, c[2], Expect.Some);
        handles = NativeHandles(s_tool);
        UnityEngine.Object.DestroyImmediate(s_tool);
        Check(handles[0].IsClosed && handles[1].IsClosed, "DestroyImmediate left the context or the results open");
    }

    // Added at run time without references: OnEnable logs what is missing instead of throwing; once they are set
    // through the properties the next step works.
    static void Unconfigured(MeshFilter organ, double[] c, double surface)
    {
        var bare = new GameObject("Bare tool").AddComponent<TrocarToolContact>();
        Check(!bare.IsReady && bare.LastError != null && bare.LastError.Contains("no organ"),
              "a tool without organ: LastError '{0}'", bare.LastError);
        Action step = PlayerLoop.Bind(bare, "FixedUpdate");
        step();
        step();
        Check(CountLog(LogType.Error, "no organ") == 1, "the missing organ is logged {0} times, not once",
              CountLog(LogType.Error, "no organ"));
        bare.Organ = organ;
        bare.EntryPoint = s_entry;
        bare.Tip = s_tip;
        SetTip(c[0], surface - 1, c[2]);
        step();
        Check(bare.IsReady && bare.LastError == null && bare.Contacts.Count > 0,
              "configured through the properties: ready {0}, error '{1}', {2} contacts", bare.IsReady, bare.LastError,
              bare.Contacts.Count);
        UnityEngine.Object.DestroyImmediate(bare);
    }

    static void CheckGizmos(double[] c, double surface)
    {
        Step("in the liver, for the gizmos", c[0], surface - 1, c[2], Expect.Some);
        Gizmos.lines.Clear();
        PlayerLoop.Send(s_tool, "OnDrawGizmos");
        int expected = 1;
        for (int i = 0; i < s_tool.Contacts.Count; i++) expected += 1 + s_tool.Contacts[i].FeedbackCount;
        Check(Gizmos.lines.Count == expected, "OnDrawGizmos drew {0} lines, expected {1}", Gizmos.lines.Count, expected);
        Check(Gizmos.lines.Count > 0 && Near(Gizmos.lines[0].Key, s_entry.position, 0) && Near(Gizmos.lines[0].Value, s_tip.position, 0),
              "the first gizmo is not the tool's axis");
    }

    static void CheckLog()
    {
        foreach (Debug.Entry e in Debug.entries)
        {
            bool expected = e.type == LogType.Warning ? e.message.Contains("not uniform")
                : e.message.Contains("radius must be > 0") || e.message.Contains("no organ");
            Check(expected, "unexpected log entry: [{0}] {1}", e.type, e.message);
            Check(e.context is TrocarToolContact, "log entry without the component as context: {0}", e.message);
        }
    }

    // ---- one step, and the driver's own answer ---------------------------------------------------------------------

    static void SetTip(double x, double y, double z) { s_tip.position = World(x, y, z); }

    // Moves the tip to the point (x, y, z) of the organ's local frame, runs the component's FixedUpdate, and requires
    // its contacts to be the driver's answer.
    static void Step(string label, double x, double y, double z, Expect expect)
    {
        SetTip(x, y, z);
        try { s_fixedUpdate(); }
        catch (Exception e)
        {
            Check(false, "{0}: FixedUpdate threw {1}", label, e);
            return;
        }
        Check(s_tool.LastError == null, "{0}: {1}", label, s_tool.LastError);
        List<Contact> expected = Reference();
        IReadOnlyList<ToolContact> got = s_tool.Contacts;
        Console.WriteLine("{0,-44} {1,4} contacts (driver: {2})", label, got.Count, expected.Count);
        if (expect == Expect.None) Check(got.Count == 0, "{0}: {1} contacts, expected none", label, got.Count);
        if (expect == Expect.Some) Check(got.Count > 0, "{0}: no contacts", label);
        Compare(label, got, expected);
    }

    struct Contact
    {
        public uint Triangle;
        public double[] Point, PointOnTool, Normal;
        public double Distance, TimeOfImpact, Penetration;
        public double[] FaceNormal;
    }

    // The tool side the component should report this step (from the same reference query), in world space.
    static ToolSideContact s_refToolSide;
    static int s_toolSideSteps;

    // The query the component should have made this step, in the organ's local frame (world space while the scale
    // is not uniform), with the tool converted in double precision; answers in world space.
    static List<Contact> Reference()
    {
        bool world = !UniformScale();
        if (world != s_refWorldSpace) s_refSweep = false;
        s_refWorldSpace = world;
        double scale = world ? 1 : s_organ.localScale.x;

        var positions = new float[s_seenPositions.Length];
        for (int i = 0; i < positions.Length; i += 3)
        {
            double[] p = { s_seenPositions[i], s_seenPositions[i + 1], s_seenPositions[i + 2] };
            if (world) p = ToWorldPoint(p);
            for (int k = 0; k < 3; k++) positions[i + k] = (float)p[k];
        }
        if (s_refMeshTriangles != s_seenTriangles)
        {
            if (s_refMeshTriangles != null) s_ref.DestroyMesh(s_refMesh);
            s_refMesh = s_ref.CreateMesh(positions, s_seenTriangles);
            s_refMeshTriangles = s_seenTriangles;
        }
        else s_ref.UpdatePositions(s_refMesh, 0, positions);

        double[] tip = Frame(s_tip.position), entry = Frame(s_entry.position);
        var tool = new TrocarTool(F(entry), F(s_refSweep ? s_refPreviousTip : tip), (float)(Radius / scale));
        tool.Up = F(world ? D(s_tip.up) : ToLocalVector(D(s_tip.up)));
        if (s_refSweep) s_ref.QueryDynamic(s_refMesh, tool, F(tip), s_tool.Volume, s_refResults);
        else s_ref.QueryStatic(s_refMesh, tool, s_tool.Volume, s_refResults);
        s_refPreviousTip = tip;
        s_refSweep = s_tool.DynamicQuery;

        var list = new List<Contact>();
        ReadOnlySpan<TrocarHit> hits = s_refResults.Hits();
        for (int i = 0; i < hits.Length; i++)
        {
            TrocarHit h = hits[i];
            var contact = new Contact { Triangle = h.Triangle, Distance = h.Distance * scale, TimeOfImpact = h.TimeOfImpact,
                                        Penetration = h.Penetration * scale };
            contact.FaceNormal = world ? D(h.FaceNormal) : Rotate(D(h.FaceNormal));
            contact.Point = world ? D(h.PointOnMesh) : ToWorldPoint(D(h.PointOnMesh));
            contact.PointOnTool = world ? D(h.PointOnTool) : ToWorldPoint(D(h.PointOnTool));
            contact.Normal = world ? D(h.Normal) : Rotate(D(h.Normal));
            list.Add(contact);
        }
        TrocarContact tc = s_refResults.Contact();
        s_refToolSide = new ToolSideContact { Triangle = -1 };
        if (tc.Triangle != TrocarContact.NoTriangle)
        {
            double[] push = world ? D(tc.Normal) : Rotate(D(tc.Normal));
            s_refToolSide.InContact = true;
            s_refToolSide.Triangle = (int)tc.Triangle;
            s_refToolSide.Penetration = (float)(tc.Penetration * scale);
            s_refToolSide.PushOut = new Vector3((float)-push[0], (float)-push[1], (float)-push[2]);
            double[] onTool = world ? D(tc.PointOnTool) : ToWorldPoint(D(tc.PointOnTool));
            s_refToolSide.PointOnTool = new Vector3((float)onTool[0], (float)onTool[1], (float)onTool[2]);
        }
        return list;
    }

    static int StaticHits(double[] local)
    {
        var tool = new TrocarTool(F(Frame(s_entry.position)), F(Frame(World(local[0], local[1], local[2]))),
                                  (float)(Radius / s_organ.localScale.x));
        s_ref.QueryStatic(s_refMesh, tool, TrocarVolume.Capsule, s_refResults);
        return s_refResults.Hits().Length;
    }

    // Same triangles, except ones within float rounding of the tool's boundary; same contact data.
    static void Compare(string label, IReadOnlyList<ToolContact> got, List<Contact> expected)
    {
        bool capsule = s_tool.Volume == TrocarVolume.Capsule;
        var byTriangle = new Dictionary<int, ToolContact>();
        foreach (ToolContact g in got) byTriangle[g.Triangle] = g;
        var expectedTriangles = new HashSet<int>();
        foreach (Contact e in expected)
        {
            expectedTriangles.Add((int)e.Triangle);
            ToolContact g;
            if (!byTriangle.TryGetValue((int)e.Triangle, out g))
            {
                Check(capsule && e.Distance > Radius - Band, "{0}: triangle {1} (distance {2}) missing", label, e.Triangle,
                      e.Distance);
                continue;
            }
            Check(Distance(D(g.Point), e.Point) <= PointTol, "{0} tri {1}: point {2}, expected {3}", label, e.Triangle,
                  g.Point, Show(e.Point));
            Check(Distance(D(g.PointOnTool), e.PointOnTool) <= PointTol, "{0} tri {1}: point on tool {2}, expected {3}",
                  label, e.Triangle, g.PointOnTool, Show(e.PointOnTool));
            Check(Dot(D(g.Normal), e.Normal) >= 0.999, "{0} tri {1}: normal {2}, expected {3}", label, e.Triangle,
                  g.Normal, Show(e.Normal));
            Check(Math.Abs(g.Distance - e.Distance) <= DistanceTol, "{0} tri {1}: distance {2}, expected {3}", label,
                  e.Triangle, g.Distance, e.Distance);
            Check(Math.Abs(g.Penetration - e.Penetration) <= DistanceTol, "{0} tri {1}: penetration {2}, expected {3}", label,
                  e.Triangle, g.Penetration, e.Penetration);
            Check(Dot(D(g.FaceNormal), e.FaceNormal) >= 0.999, "{0} tri {1}: face normal {2}, expected {3}", label, e.Triangle,
                  g.FaceNormal, Show(e.FaceNormal));
            Check(Math.Abs(g.Barycentric.x + g.Barycentric.y + g.Barycentric.z - 1) <= 1e-5, "{0} tri {1}: barycentric {2}",
                  label, e.Triangle, g.Barycentric);
            Check(Math.Abs(g.TimeOfImpact - e.TimeOfImpact) <= 2e-3, "{0} tri {1}: time of impact {2}, expected {3}", label,
                  e.Triangle, g.TimeOfImpact, e.TimeOfImpact);
            Check(g.FeedbackFirst + g.FeedbackCount <= s_tool.FeedbackPoints.Count, "{0} tri {1}: feedback outside the points",
                  label, e.Triangle);
        }
        // The tool side: the same contact (the tool's penetration is radius + depth once the tip is inside).
        ToolSideContact t = s_tool.ToolSide, r = s_refToolSide;
        Check(t.InContact == r.InContact && t.Triangle == r.Triangle, "{0}: tool side on triangle {1}, expected {2}", label,
              t.Triangle, r.Triangle);
        Check(Math.Abs(t.Penetration - r.Penetration) <= DistanceTol && Dot(D(t.PushOut), D(r.PushOut)) >= (r.InContact ? 0.999 : 0),
              "{0}: tool side penetration {1} along {2}, expected {3} along {4}", label, t.Penetration, t.PushOut, r.Penetration,
              r.PushOut);
        Check(Distance(D(t.PointOnTool), D(r.PointOnTool)) <= PointTol, "{0}: tool side point {1}, expected {2}", label,
              t.PointOnTool, r.PointOnTool);
        Check(!t.InContact || got.Count > 0, "{0}: a tool side contact without a hit", label);
        if (t.InContact) s_toolSideSteps++;
        foreach (ToolContact g in got)
            if (!expectedTriangles.Contains(g.Triangle))
                Check(capsule && g.Distance > Radius - Band, "{0}: triangle {1} (distance {2}) not expected", label, g.Triangle,
                      g.Distance);
    }

    // ---- frames (double precision, from the Transform's float position, rotation and scale) ------------------------

    static bool UniformScale()
    {
        Vector3 s = s_organ.localScale;
        return s.x == s.y && s.y == s.z;
    }

    // The organ's rotation (conjugated: its inverse) applied to v.
    static double[] Rotate(double[] v, bool inverse = false)
    {
        Quaternion q = s_organ.rotation;
        double x = inverse ? -q.x : q.x, y = inverse ? -q.y : q.y, z = inverse ? -q.z : q.z, w = q.w;
        return new[]
        {
            (1 - 2 * (y * y + z * z)) * v[0] + 2 * (x * y - w * z) * v[1] + 2 * (x * z + w * y) * v[2],
            2 * (x * y + w * z) * v[0] + (1 - 2 * (x * x + z * z)) * v[1] + 2 * (y * z - w * x) * v[2],
            2 * (x * z - w * y) * v[0] + 2 * (y * z + w * x) * v[1] + (1 - 2 * (x * x + y * y)) * v[2],
        };
    }

    static double[] ToWorldPoint(double[] local)
    {
        Vector3 s = s_organ.localScale, t = s_organ.position;
        double[] r = Rotate(new[] { local[0] * s.x, local[1] * s.y, local[2] * s.z });
        return new[] { r[0] + t.x, r[1] + t.y, r[2] + t.z };
    }

    static double[] ToLocalVector(double[] world)
    {
        Vector3 s = s_organ.localScale;
        double[] r = Rotate(world, true);
        return new[] { r[0] / s.x, r[1] / s.y, r[2] / s.z };
    }

    static double[] ToLocalPoint(double[] world)
    {
        Vector3 t = s_organ.position;
        return ToLocalVector(new[] { world[0] - t.x, world[1] - t.y, world[2] - t.z });
    }

    // The frame of the component's query: the organ's local frame, or world space under non-uniform scale.
    static double[] Frame(Vector3 world) { return UniformScale() ? ToLocalPoint(D(world)) : D(world); }

    static Vector3 World(double x, double y, double z)
    {
        double[] w = ToWorldPoint(new[] { x, y, z });
        return new Vector3((float)w[0], (float)w[1], (float)w[2]);
    }

    // ---- helpers ---------------------------------------------------------------------------------------------------

    static SafeHandle[] NativeHandles(TrocarToolContact tool)
    {
        const BindingFlags Private = BindingFlags.Instance | BindingFlags.NonPublic;
        var context = (TrocarContext)typeof(TrocarToolContact).GetField("m_context", Private).GetValue(tool);
        var results = (TrocarResults)typeof(TrocarToolContact).GetField("m_results", Private).GetValue(tool);
        return new SafeHandle[] { context == null ? null : context.Handle, results == null ? null : results.Handle };
    }

    static int CountLog(LogType type, string text)
    {
        int n = 0;
        foreach (Debug.Entry e in Debug.entries)
            if (e.type == type && e.message.Contains(text)) n++;
        return n;
    }

    static double[] D(Vector3 v) { return new double[] { v.x, v.y, v.z }; }
    static double[] D(TrocarVec3 v) { return new double[] { v.X, v.Y, v.Z }; }
    static TrocarVec3 F(double[] v) { return new TrocarVec3((float)v[0], (float)v[1], (float)v[2]); }
    static double Dot(double[] a, double[] b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

    static double Distance(double[] a, double[] b)
    {
        double[] d = { a[0] - b[0], a[1] - b[1], a[2] - b[2] };
        return Math.Sqrt(Dot(d, d));
    }

    static bool Near(Vector3 a, Vector3 b, double tol) { return Distance(D(a), D(b)) <= tol; }

    static string Show(double[] v) { return string.Format(CultureInfo.InvariantCulture, "({0:F5}, {1:F5}, {2:F5})", v[0], v[1], v[2]); }

    static Vector3[] ToVector3(float[] xyz)
    {
        var v = new Vector3[xyz.Length / 3];
        for (int i = 0; i < v.Length; i++) v[i] = new Vector3(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
        return v;
    }

    static int[] ToInt(uint[] a) { return Array.ConvertAll(a, i => (int)i); }

    // Positions ("v") and faces ("f", fan-triangulated; "i", "i/t" or "i//n", 1-based or negative).
    static void LoadObj(string path, out float[] positions, out uint[] triangles)
    {
        var v = new List<float>();
        var t = new List<uint>();
        foreach (string line in File.ReadLines(path))
        {
            string[] w = line.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries);
            if (w.Length == 0) continue;
            if (w[0] == "v")
                for (int k = 1; k <= 3; k++) v.Add(float.Parse(w[k], CultureInfo.InvariantCulture));
            if (w[0] != "f") continue;
            var face = new uint[w.Length - 1];
            for (int k = 0; k < face.Length; k++)
            {
                int i = int.Parse(w[k + 1].Split('/')[0], CultureInfo.InvariantCulture);
                face[k] = (uint)(i > 0 ? i - 1 : v.Count / 3 + i);
            }
            for (int k = 2; k < face.Length; k++) t.AddRange(new[] { face[0], face[k - 1], face[k] });
        }
        positions = v.ToArray();
        triangles = t.ToArray();
    }

    static void Bounds(float[] p, out double[] lo, out double[] hi, out double[] centroid)
    {
        lo = new[] { double.MaxValue, double.MaxValue, double.MaxValue };
        hi = new[] { double.MinValue, double.MinValue, double.MinValue };
        centroid = new double[3];
        for (int i = 0; i < p.Length; i++)
        {
            lo[i % 3] = Math.Min(lo[i % 3], p[i]);
            hi[i % 3] = Math.Max(hi[i % 3], p[i]);
            centroid[i % 3] += p[i] / (p.Length / 3);
        }
    }

    // Height of the liver's top surface on the vertical line (local y) through (x, z).
    static double SurfaceHeight(float[] p, uint[] tri, double x, double z)
    {
        double top = double.MinValue;
        for (int t = 0; t < tri.Length; t += 3)
        {
            uint a = 3 * tri[t], b = 3 * tri[t + 1], c = 3 * tri[t + 2];
            double det = (p[b] - p[a]) * (p[c + 2] - p[a + 2]) - (p[c] - p[a]) * (p[b + 2] - p[a + 2]);
            if (Math.Abs(det) < 1e-12) continue;
            double u = ((x - p[a]) * (p[c + 2] - p[a + 2]) - (p[c] - p[a]) * (z - p[a + 2])) / det;
            double w = ((p[b] - p[a]) * (z - p[a + 2]) - (x - p[a]) * (p[b + 2] - p[a + 2])) / det;
            if (u < 0 || w < 0 || u + w > 1) continue;
            top = Math.Max(top, p[a + 1] + u * (p[b + 1] - p[a + 1]) + w * (p[c + 1] - p[a + 1]));
        }
        if (top == double.MinValue) throw new InvalidDataException("no liver surface above the centroid");
        return top;
    }
}
