// Test of the C# binding on the SOFA liver, under Mono (see bindings/run-tests.sh).
//
// Usage: mono TrocarTest.exe <shared-dir> <reference-file>
// The reference file is written by the Python test (TROCAR_REFERENCE_OUT=... bindings/python/test_trocar.py),
// whose hits are checked there against a double-precision brute-force reference. This program runs the same
// poses through the C# binding (same float inputs, the liver breathed in the same way through
// trocar_mesh_update_positions) and requires the same hit triangles, distances and times of impact; it also
// checks struct sizes against the header's, the error and version-check paths, and batch/submit answers.
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
        public double Scale;
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

    static List<Pose> LoadReference(string path, out double[] centroid)
    {
        var poses = new List<Pose>();
        centroid = null;
        bool ended = false;
        foreach (var line in File.ReadLines(path))
        {
            var p = line.Split(' ');
            if (p[0] == "centroid") centroid = new[] { D(p[1]), D(p[2]), D(p[3]) };
            else if (p[0] == "pose")
            {
                // pose <dynamic> <volume> <scale> entry(3) tip(3) new_tip(3) radius label
                var pose = new Pose();
                pose.Dynamic = p[1] == "1";
                pose.Volume = (TrocarVolume)uint.Parse(p[2]);
                pose.Scale = D(p[3]);
                pose.Tool = new TrocarTool(V(p, 4), V(p, 7), F(p[13]));
                pose.NewTip = V(p, 10);
                pose.Label = p[14].Replace('_', ' ');
                poses.Add(pose);
            }
            else if (p[0] == "hit")
            {
                var pose = poses[poses.Count - 1];
                pose.Tri.Add(uint.Parse(p[1]));
                pose.Dist.Add(F(p[2]));
                pose.Toi.Add(F(p[3]));
            }
            else if (p[0] == "end") ended = true;
        }
        if (!ended || centroid == null) throw new InvalidDataException(path + ": truncated reference file");
        return poses;
    }

    static void Run(TrocarContext ctx, TrocarMeshId mesh, Pose pose, TrocarResults res)
    {
        if (pose.Dynamic) ctx.QueryDynamic(mesh, pose.Tool, pose.NewTip, pose.Volume, res);
        else ctx.QueryStatic(mesh, pose.Tool, pose.Volume, res);
    }

    // The hits of query qi against what the Python binding got for the same pose.
    static void Compare(string what, TrocarResults res, uint qi, Pose pose)
    {
        ReadOnlySpan<TrocarHit> hits = res.Hits(qi);
        TrocarHitView view = res.HitsView(qi);
        Check(hits.Length == view.Count, "{0}: span has {1} hits, view {2}", what, hits.Length, view.Count);
        if (!Check(hits.Length == pose.Tri.Count, "{0}: {1} hits, the Python binding got {2}", what, hits.Length,
                   pose.Tri.Count))
            return;
        ReadOnlySpan<TrocarVec3> fb = res.Feedback(qi);
        for (int i = 0; i < hits.Length; i++)
        {
            TrocarHit h = hits[i];
            Check(h.Triangle == pose.Tri[i], "{0}: hit {1} is triangle {2}, Python: {3}", what, i, h.Triangle, pose.Tri[i]);
            Check(Math.Abs(h.Distance - pose.Dist[i]) <= 1e-6, "{0} tri {1}: distance {2}, Python {3}", what,
                  h.Triangle, h.Distance, pose.Dist[i]);
            Check(Math.Abs(h.TimeOfImpact - pose.Toi[i]) <= 1e-6, "{0} tri {1}: time of impact {2}, Python {3}", what,
                  h.Triangle, h.TimeOfImpact, pose.Toi[i]);
            Check(view[i].Triangle == h.Triangle && view[i].Distance == h.Distance, "{0}: view differs from span", what);
            if (pose.Volume == TrocarVolume.Capsule)
                Check(h.Distance <= pose.Tool.Radius * (1 + 1e-4), "{0} tri {1}: distance {2} > radius", what,
                      h.Triangle, h.Distance);
            double nl = Math.Sqrt(h.Normal.X * h.Normal.X + h.Normal.Y * h.Normal.Y + h.Normal.Z * h.Normal.Z);
            Check(Math.Abs(nl - 1.0) <= 1e-3, "{0} tri {1}: normal length {2}", what, h.Triangle, nl);
            Check(h.FeedbackFirst + h.FeedbackCount <= fb.Length, "{0} tri {1}: feedback outside the array", what,
                  h.Triangle);
        }
    }

    static float[] Breathed(float[] rest, double[] c, double k)
    {
        var p = new float[rest.Length];
        for (int i = 0; i < rest.Length; i++) p[i] = (float)(c[i % 3] + (rest[i] - c[i % 3]) * k);
        return p;
    }

    static int Main(string[] args)
    {
        if (args.Length < 2)
        {
            Console.WriteLine("usage: TrocarTest.exe <shared-dir> <reference-file>");
            return 1;
        }
        string obj = Path.Combine(args[0], "data", "meshes", "liver-smooth.obj");

        // The structs as the header lays them out.
        Check(Marshal.SizeOf(typeof(TrocarContextDef)) == 16, "sizeof TrocarContextDef {0}", Marshal.SizeOf(typeof(TrocarContextDef)));
        Check(Marshal.SizeOf(typeof(TrocarMeshId)) == 8, "sizeof TrocarMeshId {0}", Marshal.SizeOf(typeof(TrocarMeshId)));
        Check(Marshal.SizeOf(typeof(TrocarTool)) == 40, "sizeof TrocarTool {0}", Marshal.SizeOf(typeof(TrocarTool)));
        Check(Marshal.SizeOf(typeof(TrocarQuery)) == 68, "sizeof TrocarQuery {0}", Marshal.SizeOf(typeof(TrocarQuery)));
        Check(Marshal.SizeOf(typeof(TrocarHit)) == 64, "sizeof TrocarHit {0}", Marshal.SizeOf(typeof(TrocarHit)));
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "Distance") == 12, "offset of TrocarHit.Distance");
        Check((int)Marshal.OffsetOf(typeof(TrocarHit), "TimeOfImpact") == 52, "offset of TrocarHit.TimeOfImpact");
        Check((int)Marshal.OffsetOf(typeof(TrocarQuery), "Volume") == 64, "offset of TrocarQuery.Volume");

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

        var posList = new List<float>();
        var triList = new List<uint>();
        LoadObj(obj, posList, triList);
        float[] rest = posList.ToArray();
        uint[] tri = triList.ToArray();
        Check(rest.Length == 3 * 2194 && tri.Length == 3 * 4384, "liver has {0} vertices and {1} triangles",
              rest.Length / 3, tri.Length / 3);
        double[] centroid;
        List<Pose> poses = LoadReference(args[1], out centroid);
        Check(poses.Count >= 5, "only {0} poses in the reference file", poses.Count);
        Console.WriteLine("TrocarTest: {0}: {1} vertices, {2} triangles; {3} poses from {4}", obj, rest.Length / 3,
                          tri.Length / 3, poses.Count, args[1]);

        using (var ctx = new TrocarContext(TrocarBackend.Cpu))
        using (var res = ctx.CreateResults())
        {
            Check(ctx.Backend == TrocarBackend.Cpu, "backend {0}", ctx.Backend);
            Console.WriteLine("TrocarTest: device \"{0}\"", ctx.DeviceName);
            TrocarMeshId mesh = ctx.CreateMesh(rest, tri);
            uint nv, nt;
            ctx.MeshCounts(mesh, out nv, out nt);
            Check(nv == 2194 && nt == 4384, "mesh counts {0}/{1}", nv, nt);

            double scale = 1.0;
            foreach (var pose in poses)
            {
                if (pose.Scale != scale)
                {
                    float[] p = Breathed(rest, centroid, pose.Scale);
                    ctx.UpdatePositions(mesh, 0, p);
                    float[] back = ctx.ReadPositions(mesh);
                    bool same = back.Length == p.Length;
                    for (int i = 0; same && i < p.Length; i++) same = back[i] == p[i];
                    Check(same, "read-back positions differ after breathing by {0}", pose.Scale);
                    scale = pose.Scale;
                }
                Run(ctx, mesh, pose, res);
                Check(res.QueryCount == 1, "{0}: query count {1}", pose.Label, res.QueryCount);
                Compare(pose.Label, res, 0, pose);
                Console.WriteLine("TrocarTest: {0,-42} {1,4} hits (same as the Python binding's)", pose.Label,
                                  res.Hits().Length);
            }
            ctx.UpdatePositions(mesh, 0, rest);

            // One batch of the rest-shape poses, and the same submitted and waited for: same answers.
            var atRest = poses.FindAll(p => p.Scale == 1.0);
            var queries = new TrocarQuery[atRest.Count];
            for (int i = 0; i < atRest.Count; i++)
                queries[i] = TrocarContext.MakeQuery(mesh, atRest[i].Tool, atRest[i].Dynamic, atRest[i].NewTip,
                                                     atRest[i].Volume);
            using (var batch = ctx.CreateResults())
            {
                ctx.QueryBatch(queries, batch);
                Check(batch.QueryCount == atRest.Count, "batch answered {0} queries", batch.QueryCount);
                for (int i = 0; i < atRest.Count; i++) Compare("batch " + atRest[i].Label, batch, (uint)i, atRest[i]);
                ctx.Submit(queries, batch);
                ctx.Wait(batch);
                Check(!batch.IsPending, "pending after the wait");
                for (int i = 0; i < atRest.Count; i++) Compare("submitted " + atRest[i].Label, batch, (uint)i, atRest[i]);
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

        if (s_failures > 0)
        {
            Console.WriteLine("TrocarTest: {0} of {1} checks FAILED", s_failures, s_checks);
            return 1;
        }
        Console.WriteLine("TrocarTest: {0} checks passed", s_checks);
        return 0;
    }
}
