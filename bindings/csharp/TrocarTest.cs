// Test of the C# binding on the SOFA liver, under Mono (see bindings/run-tests.sh).
//
// Usage: mono TrocarTest.exe <data-dir> <record-file>
// The record is written by the C example (examples_c/liver_steps <data-dir> cpu <record-file>), whose hits are
// checked there against double-precision reference geometry: every position update of its 60 steps (the liver
// "breathing" about its centroid, whole or in part) and every single query, with the hits it got. This program
// replays it through the C# binding (same float inputs, positions computed the same way in double) and requires
// the same hit triangles, distances and times of impact; it also checks struct sizes against the header's, the
// error and version-check paths, and batch/submit answers.
// Exit status: 0 all checks passed, 1 otherwise.

using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
using Trocar;

static class TrocarTest
{
    static int s_checks, s_failures;

    static bool Check(bool ok, string fmt, params object[] args)
    {
        s_checks++;
        if (!ok)
        {
            s_failures++;
            if (s_failures <= 50) Console.WriteLine("FAIL: " + string.Format(CultureInfo.InvariantCulture, fmt, args));
        }
        return ok;
    }

    static double D(string s) { return double.Parse(s, CultureInfo.InvariantCulture); }
    static float F(string s) { return (float)D(s); }

    class Pose
    {
        public string Label;
        public bool Dynamic;
        public TrocarVolume Volume;
        public TrocarTool Tool;
        public TrocarVec3 NewTip;
        public List<uint> Tri = new List<uint>();
        public List<float> Dist = new List<float>();
        public List<float> Toi = new List<float>();
    }

    static void LoadObj(string path, List<float> pos, List<uint> tri)
    {
        foreach (var raw in File.ReadLines(path))
        {
            var p = raw.Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
            if (p.Length == 0) continue;
            if (p[0] == "v")
            {
                for (int k = 1; k <= 3; k++) pos.Add(F(p[k]));
            }
            else if (p[0] == "f")
            {
                int nv = pos.Count / 3;
                var idx = new List<uint>();
                for (int k = 1; k < p.Length; k++)
                {
                    int v = int.Parse(p[k].Split('/')[0], CultureInfo.InvariantCulture);
                    idx.Add((uint)(v < 0 ? v + nv : v - 1));
                }
                for (int k = 2; k < idx.Count; k++)
                {
                    tri.Add(idx[0]);
                    tri.Add(idx[k - 1]);
                    tri.Add(idx[k]);
                }
            }
        }
    }

    static TrocarVec3 V(string[] p, int i) { return new TrocarVec3(F(p[i]), F(p[i + 1]), F(p[i + 2])); }

    // One event of the C example's record: a position update, or a query with the hits the C example got.
    class Event
    {
        public uint First, Count;
        public double K; // update: vertices [First, First + Count) become centroid + (rest - centroid) * K
        public Pose Pose; // or this query
    }

    // Reads the record examples_c/liver_steps.c writes (record_query and breathe there give the format).
    static List<Event> LoadRecord(string path, out double[] centroid, out uint nv, out uint nt)
    {
        var events = new List<Event>();
        centroid = null;
        nv = nt = 0;
        bool ended = false;
        var lines = File.ReadLines(path).GetEnumerator();
        if (!lines.MoveNext() || lines.Current != "trocar-liver-steps 1")
            throw new InvalidDataException(path + ": not a liver_steps record (version 1)");
        while (lines.MoveNext())
        {
            var p = lines.Current.Split(' ');
            if (p[0] == "mesh")
            {
                nv = uint.Parse(p[1], CultureInfo.InvariantCulture);
                nt = uint.Parse(p[2], CultureInfo.InvariantCulture);
            }
            else if (p[0] == "centroid") centroid = new[] { D(p[1]), D(p[2]), D(p[3]) };
            else if (p[0] == "update")
            {
                events.Add(new Event
                {
                    First = uint.Parse(p[1], CultureInfo.InvariantCulture),
                    Count = uint.Parse(p[2], CultureInfo.InvariantCulture),
                    K = D(p[3]),
                });
            }
            else if (p[0] == "pose")
            {
                // pose <dynamic> <volume> entry(3) tip(3) new_tip(3) radius label
                var pose = new Pose();
                pose.Dynamic = p[1] == "1";
                pose.Volume = (TrocarVolume)uint.Parse(p[2], CultureInfo.InvariantCulture);
                pose.Tool = new TrocarTool(V(p, 3), V(p, 6), F(p[12]));
                pose.NewTip = V(p, 9);
                pose.Label = p[13].Replace('_', ' ');
                events.Add(new Event { Pose = pose });
            }
            else if (p[0] == "hit")
            {
                var pose = events[events.Count - 1].Pose;
                pose.Tri.Add(uint.Parse(p[1], CultureInfo.InvariantCulture));
                pose.Dist.Add(F(p[2]));
                pose.Toi.Add(F(p[3]));
            }
            else if (p[0] == "end") ended = true;
        }
        if (!ended || centroid == null) throw new InvalidDataException(path + ": truncated record");
        return events;
    }

    static void Run(TrocarContext ctx, TrocarMeshId mesh, Pose pose, TrocarResults res)
    {
        if (pose.Dynamic) ctx.QueryDynamic(mesh, pose.Tool, pose.NewTip, pose.Volume, res);
        else ctx.QueryStatic(mesh, pose.Tool, pose.Volume, res);
    }

    // The hits of query qi against what the C example got for the same pose.
    static void Compare(string what, TrocarResults res, uint qi, Pose pose)
    {
        ReadOnlySpan<TrocarHit> hits = res.Hits(qi);
        TrocarHitView view = res.HitsView(qi);
        Check(hits.Length == view.Count, "{0}: span has {1} hits, view {2}", what, hits.Length, view.Count);
        if (!Check(hits.Length == pose.Tri.Count, "{0}: {1} hits, the C example got {2}", what, hits.Length,
                   pose.Tri.Count))
            return;
        ReadOnlySpan<TrocarVec3> fb = res.Feedback(qi);
        for (int i = 0; i < hits.Length; i++)
        {
            TrocarHit h = hits[i];
            Check(h.Triangle == pose.Tri[i], "{0}: hit {1} is triangle {2}, C: {3}", what, i, h.Triangle, pose.Tri[i]);
            Check(Math.Abs(h.Distance - pose.Dist[i]) <= 1e-6, "{0} tri {1}: distance {2}, C {3}", what,
                  h.Triangle, h.Distance, pose.Dist[i]);
            Check(Math.Abs(h.TimeOfImpact - pose.Toi[i]) <= 1e-6, "{0} tri {1}: time of impact {2}, C {3}", what,
                  h.Triangle, h.TimeOfImpact, pose.Toi[i]);
            Check(view[i].Triangle == h.Triangle && view[i].Distance == h.Distance, "{0}: view differs from span", what);
            if (pose.Volume == TrocarVolume.Capsule)
                Check(h.Distance <= pose.Tool.Radius * (1 + 1e-4), "{0} tri {1}: distance {2} > radius", what,
                      h.Triangle, h.Distance);
            double nl = Math.Sqrt(h.Normal.X * h.Normal.X + h.Normal.Y * h.Normal.Y + h.Normal.Z * h.Normal.Z);
            Check(Math.Abs(nl - 1.0) <= 1e-3, "{0} tri {1}: normal length {2}", what, h.Triangle, nl);
            // The mesh side: a unit face normal, a penetration at least radius - distance (the plane's reach is at
            // least the triangle's), weights summing to 1.
            double fl = Math.Sqrt(h.FaceNormal.X * h.FaceNormal.X + h.FaceNormal.Y * h.FaceNormal.Y +
                                  h.FaceNormal.Z * h.FaceNormal.Z);
            Check(Math.Abs(fl - 1.0) <= 1e-3, "{0} tri {1}: face normal length {2}", what, h.Triangle, fl);
            if (!pose.Dynamic)
                Check(h.Penetration >= pose.Tool.Radius - h.Distance - 1e-4, "{0} tri {1}: penetration {2} < radius - distance",
                      what, h.Triangle, h.Penetration);
            double ws = h.Barycentric.X + h.Barycentric.Y + h.Barycentric.Z;
            Check(Math.Abs(ws - 1.0) <= 1e-5 && h.Barycentric.X >= 0 && h.Barycentric.Y >= 0 && h.Barycentric.Z >= 0,
                  "{0} tri {1}: barycentric weights {2} {3} {4}", what, h.Triangle, h.Barycentric.X,
                  h.Barycentric.Y, h.Barycentric.Z);
            Check(h.FeedbackFirst + h.FeedbackCount <= fb.Length, "{0} tri {1}: feedback outside the array", what,
                  h.Triangle);
        }
    }

    static TrocarStatus StatusOf(Action a)
    {
        try { a(); }
        catch (TrocarException e) { return e.Status; }
        return TrocarStatus.Ok;
    }

    static double[] Points(params double[][] p)
    {
        var a = new double[24];
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 3; k++) a[3 * i + k] = p[i][k];
        return a;
    }

    // The CCD primitives on every CCD sample query (0 false negatives and 0 false positives: exact without a
    // separation), on hand-computed cases, and mesh against mesh.
    static void TestCcd(string dataDir)
    {
        string dir = Path.Combine(dataDir, "ccd");
        int total = 0;
        foreach (var file in Directory.GetFiles(dir, "*.csv"))
        {
            bool edges = file.Contains("edge-edge");
            int n = 0, fn = 0, fp = 0;
            foreach (var raw in File.ReadLines(file))
            {
                var line = raw.Trim();
                if (line.Length == 0 || line.StartsWith("#")) continue;
                var v = line.Split(',');
                var pts = new double[24];
                for (int i = 0; i < 24; i++) pts[i] = D(v[i]);
                bool truth = v[24].Trim() == "1";
                double toi;
                bool hit = edges ? TrocarCcd.EdgeEdge(pts, 0.0, out toi) : TrocarCcd.VertexFace(pts, 0.0, out toi);
                fn += truth && !hit ? 1 : 0;
                fp += hit && !truth ? 1 : 0;
                Check(toi >= 0.0 && toi <= 1.0 && (hit || toi == 1.0), "{0} query {1}: time {2}", file, n, toi);
                n++;
            }
            Check(fn == 0, "{0}: {1} collisions missed", file, fn);
            Check(fp == 0, "{0}: {1} false positives in {2}", file, fp, n);
            total += n;
        }
        Check(total == 1324, "{0} CCD queries read, expected 1324", total);

        var a = new double[] { 0, 0, 0 };
        var b = new double[] { 1, 0, 0 };
        var c = new double[] { 0, 1, 0 };
        double t;
        Check(TrocarCcd.VertexFace(Points(new[] { 0.25, 0.25, 1.0 }, a, b, c, new[] { 0.25, 0.25, -1.0 }, a, b, c), 0.0, out t)
              && t <= 0.5 && t >= 0.5 - 1e-5, "vertex through a face at t = 0.5: {0}", t);
        Check(!TrocarCcd.VertexFace(Points(new[] { 2.0, 2.0, 1.0 }, a, b, c, new[] { 2.0, 2.0, -1.0 }, a, b, c), 0.0, out t)
              && t == 1.0, "vertex beside the face: {0}", t);
        var e0 = new[] { 0.5, -1.0, 0.0 };
        var e1 = new[] { 0.5, 1.0, 0.0 };
        Check(TrocarCcd.EdgeEdge(Points(new[] { 0.0, 0.0, 0.5 }, new[] { 1.0, 0.0, 0.5 }, e0, e1,
                                        new[] { 0.0, 0.0, -1.5 }, new[] { 1.0, 0.0, -1.5 }, e0, e1), 0.0, out t)
              && t <= 0.25 && t >= 0.25 - 1e-5, "edge through an edge at t = 0.25: {0}", t);
        var nan = new double[24];
        nan[5] = double.NaN;
        Check(StatusOf(() => TrocarCcd.VertexFace(nan, 0.0, out t)) == TrocarStatus.ErrorInvalidArgument, "NaN point accepted");

        // A tetrahedron translated 1 down through a still triangle 0.5 below its lowest vertex (vertex 0).
        float[] tet = { 0.2f, 0.2f, 0.5f, 0.4f, 0.2f, 0.8f, 0.2f, 0.4f, 0.8f, 0.3f, 0.3f, 1.0f };
        uint[] faces = { 0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3 };
        using (var ctx = new TrocarContext(TrocarBackend.Cpu))
        using (var res = new TrocarCcdResults(ctx))
        {
            var ma = ctx.CreateMesh(tet, faces);
            var mb = ctx.CreateMesh(new float[] { -1, -1, 0, 2, -1, 0, -1, 2, 0 }, new uint[] { 0, 1, 2 });
            var moved = (float[])tet.Clone();
            for (int i = 2; i < moved.Length; i += 3) moved[i] -= 1.0f;
            ctx.UpdatePositions(ma, 0, moved);
            ctx.QueryCcd(ma, mb, res);
            var contacts = res.Contacts();
            Check(contacts.Length > 0, "no CCD contact");
            // Every culling gives the same contacts; an unknown one is refused.
            foreach (var culling in new[] { TrocarCcdCulling.Grid, TrocarCcdCulling.SortAndSweep, TrocarCcdCulling.AllPairs })
            {
                ctx.QueryCcd(ma, mb, res, culling: culling);
                var other = res.Contacts();
                Check(other.Length == contacts.Length, "culling {0}: {1} contacts, the BVH {2}", culling, other.Length, contacts.Length);
                for (int i = 0; i < Math.Min(other.Length, contacts.Length); i++)
                    Check(other[i].TimeOfImpact == contacts[i].TimeOfImpact && other[i].Kind == contacts[i].Kind
                          && other[i].FeatureA0 == contacts[i].FeatureA0 && other[i].FeatureB0 == contacts[i].FeatureB0,
                          "culling {0}: contact {1} differs", culling, i);
            }
            Check(StatusOf(() => ctx.QueryCcd(ma, mb, res, culling: (TrocarCcdCulling)4)) == TrocarStatus.ErrorInvalidArgument,
                  "unknown culling accepted");
            ctx.QueryCcd(ma, mb, res);
            contacts = res.Contacts();
            for (int i = 1; i < contacts.Length; i++)
                Check(contacts[i - 1].TimeOfImpact <= contacts[i].TimeOfImpact, "CCD contacts not sorted by time");
            if (contacts.Length > 0)
            {
                var f = contacts[0];
                Check(f.Kind == TrocarCcdKind.VertexFace && f.FeatureA0 == 0 && f.FeatureB0 == 0
                      && f.FeatureB1 == TrocarCcdContact.NoIndex, "first contact {0} {1} {2}", f.Kind, f.FeatureA0, f.FeatureB0);
                Check(f.TimeOfImpact <= 0.5 && f.TimeOfImpact >= 0.5 - 1e-5, "first contact at {0}", f.TimeOfImpact);
                Check(Math.Abs(f.Point.X - 0.2) < 1e-4 && Math.Abs(f.Point.Y - 0.2) < 1e-4 && Math.Abs(f.Point.Z) < 1e-4,
                      "first contact point {0}", f.Point);
            }
            Check(StatusOf(() => ctx.QueryCcd(ma, ma, res)) == TrocarStatus.ErrorInvalidArgument, "self-collision query accepted");
            Console.WriteLine("TrocarTest: CCD: {0} sample queries without a miss; mesh against mesh: {1} contacts, first at {2}",
                              total, contacts.Length, contacts.Length > 0 ? contacts[0].TimeOfImpact : -1);
        }
    }

    // The tracker on the liver, cross-checked against the library's clip-select query (a separate code path):
    // apart from the surface the tracker's distance is the nearest hit's of a wide capsule around the tool.
    static void TestTracker(float[] rest, uint[] tri)
    {
        int top = 0;
        for (int v = 1; v < rest.Length / 3; v++)
            if (rest[3 * v + 1] > rest[3 * top + 1]) top = v;
        var entry = new TrocarVec3(rest[3 * top] + 1.0f, rest[3 * top + 1] + 8.0f, rest[3 * top + 2]);
        using (var ctx = new TrocarContext(TrocarBackend.Cpu))
        using (var res = ctx.CreateResults())
        {
            var mesh = ctx.CreateMesh(rest, tri);
            using (var tracker = ctx.CreateTracker(mesh, 1))
            {
                Check(tracker.SegmentCount == 1 && tracker.MaxStripLength == 32, "tracker def {0}/{1}", tracker.SegmentCount,
                      tracker.MaxStripLength);
                int strips = 0;
                foreach (float height in new[] { 1.0f, 0.3f, 0.1f, -0.2f })
                {
                    var tip = new TrocarVec3(rest[3 * top], rest[3 * top + 1] + height, rest[3 * top + 2]);
                    var tool = new TrocarTool(entry, tip, 0.25f);
                    ctx.QueryStatic(mesh, tool, TrocarVolume.Capsule, res);
                    tracker.Reseed(res);
                    var contacts = tracker.Update(tool);
                    Check(contacts.Count == 1, "{0} contacts for one segment", contacts.Count);
                    var ct = contacts.Array[0];
                    Check(Math.Abs(ct.Penetration - (0.25f - ct.SignedDistance)) < 1e-6, "penetration {0}", ct.Penetration);
                    // The query's contact for the tool side is the one-segment tracker's; empty when apart.
                    var qc = res.Contact();
                    if (ct.Penetration > 0)
                        Check(Math.Abs(qc.Penetration - ct.Penetration) < 1e-5 && qc.Triangle != TrocarContact.NoTriangle,
                              "tip {0}: query contact {1}, tracker {2}", height, qc.Penetration, ct.Penetration);
                    else
                        Check(qc.Triangle == TrocarContact.NoTriangle && qc.Penetration == 0, "tip {0}: contact while apart", height);
                    if (height > 0)
                    {
                        ctx.QueryStatic(mesh, new TrocarTool(entry, tip, 1.5f), TrocarVolume.Capsule, res);
                        float nearest = float.MaxValue;
                        foreach (var h in res.HitsView().ToArray()) nearest = Math.Min(nearest, h.Distance);
                        Check(Math.Abs(ct.SignedDistance - nearest) < 1e-4, "tip {0} above: tracker {1}, nearest hit {2}",
                              height, ct.SignedDistance, nearest);
                    }
                    else
                    {
                        Check(ct.SignedDistance < 0, "tip {0} inside: signed distance {1}", height, ct.SignedDistance);
                    }
                    var strip = tracker.Strip(0);
                    Check((strip.Length > 0) == (ct.Penetration > 0), "tip {0}: strip of {1} with penetration {2}", height,
                          strip.Length, ct.Penetration);
                    strips += strip.Length;
                }
                Check(strips > 0, "no strip");
                Check(StatusOf(() => tracker.Strip(1)) == TrocarStatus.ErrorOutOfRange, "strip of a missing segment");
                Check(StatusOf(() => tracker.Reseed(res, 5)) == TrocarStatus.ErrorOutOfRange, "reseed from a missing query");
                var badTool = new TrocarTool(entry, entry, 0.25f);
                Check(StatusOf(() => tracker.Update(badTool)) == TrocarStatus.ErrorInvalidArgument, "entry == tip accepted");
                Console.WriteLine("TrocarTest: tracker agrees with clip-select; {0} strip triangles", strips);
            }
            Check(StatusOf(() => ctx.CreateTracker(mesh, 65)) == TrocarStatus.ErrorInvalidArgument, "65 segments accepted");
            var stale = ctx.CreateTracker(mesh);
            ctx.DestroyMesh(mesh);
            var far = new TrocarTool(entry, new TrocarVec3(0, 0, 0), 0.25f);
            Check(StatusOf(() => stale.Update(far)) == TrocarStatus.ErrorStaleHandle, "tracker of a destroyed mesh");
            stale.Dispose();
        }
    }

    static TrocarContact[] Copy(ArraySegment<TrocarContact> s)
    {
        var copy = new TrocarContact[s.Count];
        Array.Copy(s.Array, s.Offset, copy, 0, s.Count);
        return copy;
    }

    // SetTopology: the triangles around the liver's top vertex split at their centroids (vertices appended) under
    // a tracker; the mesh then answers as a new mesh of the same data, its tracker as a new tracker. A refused
    // call changes nothing; back to the liver (fewer vertices).
    static void TestSetTopology(float[] rest, uint[] tri)
    {
        int top = 0;
        for (int v = 1; v < rest.Length / 3; v++)
            if (rest[3 * v + 1] > rest[3 * top + 1]) top = v;
        var grown = new List<float>(rest);
        var grownTri = new List<uint>();
        for (int t = 0; t < tri.Length / 3; t++)
        {
            uint a = tri[3 * t], b = tri[3 * t + 1], c = tri[3 * t + 2];
            if (a != top && b != top && c != top)
            {
                grownTri.AddRange(new[] { a, b, c });
                continue;
            }
            uint m = (uint)(grown.Count / 3);
            for (int k = 0; k < 3; k++) grown.Add((rest[3 * a + k] + rest[3 * b + k] + rest[3 * c + k]) / 3.0f);
            grownTri.AddRange(new[] { a, b, m, b, c, m, c, a, m });
        }
        float[] gp = grown.ToArray();
        uint[] gt = grownTri.ToArray();
        var entry = new TrocarVec3(rest[3 * top] + 1.0f, rest[3 * top + 1] + 8.0f, rest[3 * top + 2]);
        var tool = new TrocarTool(entry, new TrocarVec3(rest[3 * top], rest[3 * top + 1] - 0.2f, rest[3 * top + 2]), 0.25f);
        using (var ctx = new TrocarContext(TrocarBackend.Cpu))
        using (var res = ctx.CreateResults())
        using (var freshRes = ctx.CreateResults())
        {
            var mesh = ctx.CreateMesh(rest, tri);
            using (var tracker = ctx.CreateTracker(mesh))
            {
                tracker.Update(tool);
                ctx.SetTopology(mesh, gp, gt);
                uint nv, nt;
                ctx.MeshCounts(mesh, out nv, out nt);
                Check(nv == gp.Length / 3 && nt == gt.Length / 3 && nv > rest.Length / 3, "set_topology counts {0}/{1}", nv, nt);
                var past = (uint[])gt.Clone();
                past[4] = nv;
                Check(StatusOf(() => ctx.SetTopology(mesh, gp, past)) == TrocarStatus.ErrorOutOfRange, "index past the vertices accepted");
                var nan = (float[])gp.Clone();
                nan[nan.Length - 1] = float.NaN;
                Check(StatusOf(() => ctx.SetTopology(mesh, nan, gt)) == TrocarStatus.ErrorInvalidArgument, "NaN position accepted");
                ctx.MeshCounts(mesh, out nv, out nt);
                Check(nv == gp.Length / 3 && nt == gt.Length / 3, "a refused set_topology changed the counts");
                var fresh = ctx.CreateMesh(gp, gt);
                using (var freshTracker = ctx.CreateTracker(fresh))
                {
                    var got = Copy(tracker.Update(tool));
                    var want = Copy(freshTracker.Update(tool));
                    Check(got.Length == want.Length && got.Length > 0, "{0} contacts, a new tracker {1}", got.Length, want.Length);
                    bool touching = false;
                    for (int i = 0; i < got.Length; i++)
                    {
                        Check(got[i].Equals(want[i]), "segment {0}: the tracker differs from a new one", i);
                        touching |= got[i].Penetration > 0;
                    }
                    Check(touching, "the tool presses into the grown liver");
                }
                ctx.QueryStatic(mesh, tool, TrocarVolume.Capsule, res);
                ctx.QueryStatic(fresh, tool, TrocarVolume.Capsule, freshRes);
                var hits = res.Hits().ToArray();
                var freshHits = freshRes.Hits().ToArray();
                Check(hits.Length > 0 && hits.Length == freshHits.Length, "{0} hits, a new mesh {1}", hits.Length, freshHits.Length);
                for (int i = 0; i < Math.Min(hits.Length, freshHits.Length); i++)
                    Check(hits[i].Equals(freshHits[i]), "hit {0} differs from a new mesh's", i);
                ctx.SetTopology(mesh, rest, tri);
                ctx.MeshCounts(mesh, out nv, out nt);
                Check(nv == rest.Length / 3 && nt == tri.Length / 3, "set_topology back to the liver");
                Check(tracker.Update(tool).Count > 0, "the tracker after shrinking");
                Console.WriteLine("TrocarTest: set_topology to {0} vertices answers as a new mesh", gp.Length / 3);
            }
        }
    }

    // The status TrocarResults.Backend throws (Ok when it answers); a refusal must carry the library's message.
    static TrocarStatus BackendStatus(TrocarResults res)
    {
        try
        {
            TrocarBackend b = res.Backend;
            Check(b == TrocarBackend.Cpu || b == TrocarBackend.Gpu, "results backend {0}", b);
            return TrocarStatus.Ok;
        }
        catch (TrocarException e)
        {
            Check(e.LibraryMessage.Length > 0, "results backend {0}: no library message", e.Status);
            return e.Status;
        }
    }

    // An Auto context: Cpu without a hardware GPU, Auto when it holds both; a batch ran on the Cpu or the Gpu,
    // the Cpu when the context runs there.
    static void TestAutoBackend(float[] rest, uint[] tri)
    {
        using (var ctx = new TrocarContext(TrocarBackend.Auto))
        using (var res = ctx.CreateResults())
        {
            TrocarBackend held = ctx.Backend;
            Check(held == TrocarBackend.Cpu || held == TrocarBackend.Auto, "Auto context's backend {0}", held);
            TrocarStatus before = BackendStatus(res);
            Check(before == TrocarStatus.ErrorOutOfRange, "Auto: results backend before any batch: {0}", before);
            TrocarMeshId mesh = ctx.CreateMesh(rest, tri);
            float x = 0, y = float.MinValue, z = 0;
            for (int i = 0; i < rest.Length; i += 3)
            {
                x += rest[i] * 3 / rest.Length;
                y = Math.Max(y, rest[i + 1]);
                z += rest[i + 2] * 3 / rest.Length;
            }
            var tool = new TrocarTool(new TrocarVec3(x, y + 8, z), new TrocarVec3(x, y - 1, z), 0.25f);
            var q = new TrocarQuery[] { TrocarContext.MakeQuery(mesh, tool, false, tool.Tip, TrocarVolume.Capsule) };
            ctx.QueryBatch(q, res);
            Check(res.Hits().Length > 0, "Auto: the tool through the liver's top hits nothing");
            TrocarBackend ran = res.Backend;
            Check(ran == TrocarBackend.Cpu || ran == TrocarBackend.Gpu, "Auto: a batch ran on {0}", ran);
            Check(held != TrocarBackend.Cpu || ran == TrocarBackend.Cpu, "Auto on the Cpu: a batch ran on {0}", ran);
        }
    }

    static int Main(string[] args)
    {
        if (args.Length < 2)
        {
            Console.WriteLine("usage: TrocarTest.exe <data-dir> <record-file>");
            return 1;
        }
        string obj = Path.Combine(args[0], "meshes", "liver-smooth.obj");

        // The structs as the header lays them out.
        Check(Marshal.SizeOf(typeof(TrocarContextDef)) == 16, "sizeof TrocarContextDef {0}", Marshal.SizeOf(typeof(TrocarContextDef)));
        Check(Marshal.SizeOf(typeof(TrocarMeshId)) == 12, "sizeof TrocarMeshId {0}", Marshal.SizeOf(typeof(TrocarMeshId)));
        Check(Marshal.SizeOf(typeof(TrocarTool)) == 40, "sizeof TrocarTool {0}", Marshal.SizeOf(typeof(TrocarTool)));
        Check(Marshal.SizeOf(typeof(TrocarQuery)) == 76, "sizeof TrocarQuery {0}", Marshal.SizeOf(typeof(TrocarQuery)));
        Check(Marshal.SizeOf(typeof(TrocarHit)) == 92, "sizeof TrocarHit {0}", Marshal.SizeOf(typeof(TrocarHit)));
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "Distance") == 12, "offset of TrocarHit.Distance");
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "TimeOfImpact") == 52, "offset of TrocarHit.TimeOfImpact");
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "FaceNormal") == 64, "offset of TrocarHit.FaceNormal");
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "Penetration") == 76, "offset of TrocarHit.Penetration");
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "Barycentric") == 80, "offset of TrocarHit.Barycentric");
        Check((int)Marshal.OffsetOf(typeof(TrocarQuery), "Volume") == 68, "offset of TrocarQuery.Volume");
        Check((int)Marshal.OffsetOf(typeof(TrocarQuery), "HitsOnly") == 72, "offset of TrocarQuery.HitsOnly");
        Check(Marshal.SizeOf(typeof(TrocarTrackerDef)) == 12, "sizeof TrocarTrackerDef {0}", Marshal.SizeOf(typeof(TrocarTrackerDef)));
        Check(Marshal.SizeOf(typeof(TrocarContact)) == 52, "sizeof TrocarContact {0}", Marshal.SizeOf(typeof(TrocarContact)));
        Check((int)Marshal.OffsetOf(typeof(TrocarContact), "SignedDistance") == 44, "offset of TrocarContact.SignedDistance");
        Check(Marshal.SizeOf(typeof(TrocarCcdDef)) == 24, "sizeof TrocarCcdDef {0}", Marshal.SizeOf(typeof(TrocarCcdDef)));
        Check(Marshal.SizeOf(typeof(TrocarCcdContact)) == 56, "sizeof TrocarCcdContact {0}", Marshal.SizeOf(typeof(TrocarCcdContact)));
        Check((int)Marshal.OffsetOf(typeof(TrocarCcdContact), "Kind") == 32, "offset of TrocarCcdContact.Kind");
        Check((int)Marshal.OffsetOf(typeof(TrocarCcdContact), "FeatureB0") == 44, "offset of TrocarCcdContact.FeatureB0");

        // Version: the library matches; a mismatch is refused.
        uint version = Native.trocar_version();
        Console.WriteLine("TrocarTest: library version {0}.{1}.{2}", version >> 16, (version >> 8) & 0xFF, version & 0xFF);
        Check(version == Native.Version, "library version {0:x}, binding written for {1:x}", version, Native.Version);
        bool threw = false;
        try { Native.CheckVersion(version, Native.VersionMajor, Native.VersionMinor + 1); }
        catch (TrocarVersionException e) { threw = e.Message.Contains("same minor"); }
        Check(threw, "CheckVersion accepted a different 0.x minor");
        threw = false;
        try { Native.CheckVersion(version, Native.VersionMajor + 1, 0); }
        catch (TrocarVersionException) { threw = true; }
        Check(threw, "CheckVersion accepted a different major");
        Native.CheckVersion((version & ~0xFFu) | 9, Native.VersionMajor, Native.VersionMinor); // patch: fine
        threw = false;
        try { Native.CheckVersion(0x000100u, 0, 2); } // an older 0.x minor
        catch (TrocarVersionException) { threw = true; }
        Check(threw, "CheckVersion accepted 0.1 for 0.2");
        Native.CheckVersion(0x010300u, 1, 2); // from 1.0 on, minors keep the ABI

        var posList = new List<float>();
        var triList = new List<uint>();
        LoadObj(obj, posList, triList);
        float[] rest = posList.ToArray();
        uint[] tri = triList.ToArray();
        Check(rest.Length == 3 * 2194 && tri.Length == 3 * 4384, "liver has {0} vertices and {1} triangles",
              rest.Length / 3, tri.Length / 3);
        double[] centroid;
        uint recNv, recNt;
        List<Event> events = LoadRecord(args[1], out centroid, out recNv, out recNt);
        List<Pose> poses = events.FindAll(e => e.Pose != null).ConvertAll(e => e.Pose);
        Check(recNv == rest.Length / 3 && recNt == tri.Length / 3, "the record is about a mesh of {0}/{1}", recNv, recNt);
        Check(poses.Count > 100, "only {0} queries in the record", poses.Count);
        Console.WriteLine("TrocarTest: {0}: {1} vertices, {2} triangles; {3} queries and {4} updates from {5}", obj,
                          rest.Length / 3, tri.Length / 3, poses.Count, events.Count - poses.Count, args[1]);

        using (var ctx = new TrocarContext(TrocarBackend.Cpu))
        using (var res = ctx.CreateResults())
        {
            Check(ctx.Backend == TrocarBackend.Cpu, "backend {0}", ctx.Backend);
            Console.WriteLine("TrocarTest: device \"{0}\"", ctx.DeviceName);
            float[] pos = (float[])rest.Clone();
            TrocarMeshId mesh = ctx.CreateMesh(pos, tri);
            uint nv, nt;
            ctx.MeshCounts(mesh, out nv, out nt);
            Check(nv == 2194 && nt == 4384, "mesh counts {0}/{1}", nv, nt);

            // The 60 steps, in the C example's order. The queries since the last update share the current mesh.
            var sinceUpdate = new List<Pose>();
            int compared = 0, hitsCompared = 0;
            foreach (var e in events)
            {
                if (e.Pose == null)
                {
                    var part = new float[3 * e.Count];
                    for (uint i = 0; i < part.Length; i++)
                    {
                        uint j = 3 * e.First + i;
                        double c = centroid[j % 3];
                        part[i] = pos[j] = (float)(c + (rest[j] - c) * e.K); // the C example's breathing
                    }
                    ctx.UpdatePositions(mesh, e.First, part);
                    sinceUpdate.Clear();
                    continue;
                }
                Run(ctx, mesh, e.Pose, res);
                Check(res.QueryCount == 1, "{0}: query count {1}", e.Pose.Label, res.QueryCount);
                Compare(e.Pose.Label, res, 0, e.Pose);
                sinceUpdate.Add(e.Pose);
                compared++;
                hitsCompared += e.Pose.Tri.Count;
            }
            float[] back = ctx.ReadPositions(mesh);
            bool same = back.Length == pos.Length;
            for (int i = 0; same && i < pos.Length; i++) same = back[i] == pos[i];
            Check(same, "read-back positions differ from the replayed ones");
            Console.WriteLine("TrocarTest: {0} queries replayed, {1} hits compared with the C example's", compared, hitsCompared);

            // The last step's queries in one batch, and the same submitted and waited for: same answers.
            var last = sinceUpdate;
            Check(last.Count >= 3, "only {0} queries in the last step", last.Count);
            var queries = new TrocarQuery[last.Count];
            for (int i = 0; i < last.Count; i++)
                queries[i] = TrocarContext.MakeQuery(mesh, last[i].Tool, last[i].Dynamic, last[i].NewTip, last[i].Volume);
            using (var batch = ctx.CreateResults())
            {
                TrocarStatus before = BackendStatus(batch);
                Check(before == TrocarStatus.ErrorOutOfRange, "results backend before any batch: {0}", before);
                ctx.QueryBatch(queries, batch);
                Check(batch.QueryCount == last.Count, "batch answered {0} queries", batch.QueryCount);
                Check(batch.Backend == TrocarBackend.Cpu, "results backend after a batch: {0}", batch.Backend);
                for (int i = 0; i < last.Count; i++) Compare("batch " + last[i].Label, batch, (uint)i, last[i]);
                ctx.Submit(queries, batch);
                Check(batch.Backend == TrocarBackend.Cpu, "results backend while pending: {0}", batch.Backend);
                ctx.Wait(batch);
                Check(!batch.IsPending, "pending after the wait");
                for (int i = 0; i < last.Count; i++) Compare("submitted " + last[i].Label, batch, (uint)i, last[i]);

                // Hits only: the same records without polygons (feedback fields 0, no feedback vertices).
                var full = new TrocarHit[last.Count][];
                for (int i = 0; i < last.Count; i++) full[i] = batch.Hits((uint)i).ToArray();
                var hitsOnly = new TrocarQuery[last.Count];
                for (int i = 0; i < last.Count; i++)
                    hitsOnly[i] = TrocarContext.MakeQuery(mesh, last[i].Tool, last[i].Dynamic, last[i].NewTip,
                                                          last[i].Volume, hitsOnly: true);
                Check(queries[0].HitsOnly == 0 && hitsOnly[0].HitsOnly == 1, "MakeQuery's HitsOnly");
                ctx.QueryBatch(hitsOnly, batch);
                for (int i = 0; i < last.Count; i++)
                {
                    ReadOnlySpan<TrocarHit> h = batch.Hits((uint)i);
                    Check(batch.Feedback((uint)i).Length == 0, "hits-only query {0}: feedback vertices", i);
                    if (!Check(h.Length == full[i].Length, "hits-only query {0}: {1} hits, full {2}", i, h.Length,
                               full[i].Length))
                        continue;
                    for (int k = 0; k < h.Length; k++)
                    {
                        TrocarHit want = full[i][k];
                        want.FeedbackFirst = 0;
                        want.FeedbackCount = 0;
                        Check(h[k].Equals(want), "hits-only query {0} hit {1}: not the full query's record", i, k);
                    }
                }
            }

            // Errors: a zero radius, a stale mesh.
            var bad = poses[0].Tool;
            bad.Radius = 0;
            TrocarStatus got = TrocarStatus.Ok;
            string msg = "";
            try { ctx.QueryStatic(mesh, bad, TrocarVolume.Capsule, res); }
            catch (TrocarException e) { got = e.Status; msg = e.LibraryMessage; }
            Check(got == TrocarStatus.ErrorInvalidArgument, "radius 0: {0}, expected ErrorInvalidArgument", got);
            Check(msg.Length > 0 && msg == Native.LastErrorMessage(), "radius 0: message \"{0}\"", msg);
            Console.WriteLine("TrocarTest: radius 0 refused: {0}", msg);
            ctx.DestroyMesh(mesh);
            got = TrocarStatus.Ok;
            try { ctx.MeshCounts(mesh, out nv, out nt); }
            catch (TrocarException e) { got = e.Status; }
            Check(got == TrocarStatus.ErrorStaleHandle, "destroyed mesh: {0}, expected ErrorStaleHandle", got);
        }

        TestCcd(args[0]);
        TestTracker(rest, tri);
        TestSetTopology(rest, tri);
        TestAutoBackend(rest, tri);

        if (s_failures > 0)
        {
            Console.WriteLine("TrocarTest: {0} of {1} checks FAILED", s_failures, s_checks);
            return 1;
        }
        Console.WriteLine("TrocarTest: {0} checks passed", s_checks);
        return 0;
    }
}
