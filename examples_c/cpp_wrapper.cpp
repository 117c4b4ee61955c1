// cpp_wrapper: bindings/cpp/trocar.hpp against the raw C API. Calls every member of the wrapper, runs the liver
// scenario (breathing liver, a tool poking in and sweeping across it) through both the wrapper and the C calls and
// requires identical hits and feedback, and checks that failures throw trocar::Error with the right status.
// trocar.hpp is included twice to exercise its include guard.
//
// Usage: cpp_wrapper <data-dir>   (reads <data-dir>/meshes/liver-smooth.obj; exit 77 when it is missing)
#include "trocar.hpp"
#include "trocar.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

constexpr int kSkip = 77;
unsigned long g_checks = 0, g_failures = 0;

bool check(bool ok, const std::string &what) {
    ++g_checks;
    if (!ok) {
        ++g_failures;
        if (g_failures <= 50) std::printf("FAIL: %s\n", what.c_str());
    }
    return ok;
}

// The raw C call must succeed.
bool c_ok(TrocarStatus s, const char *what) {
    if (s == TROCAR_OK) return check(true, what);
    char msg[512];
    trocar_last_error_message(msg, sizeof msg);
    return check(false, std::string(what) + " returned " + trocar_status_name(s) + ": " + msg);
}

// Runs f, which must throw trocar::Error with `status`.
template <class F>
void expect_error(TrocarStatus status, const std::string &what, F &&f) {
    try {
        f();
        check(false, what + ": no exception, expected " + trocar_status_name(status));
    } catch (const trocar::Error &e) {
        check(e.status() == status, what + ": status " + trocar_status_name(e.status()) + ", expected " +
                                        trocar_status_name(status) + " (" + e.what() + ")");
        check(std::string(e.what()).find(trocar_status_name(status)) != std::string::npos,
              what + ": what() does not name the status: " + e.what());
    } catch (const std::exception &e) {
        check(false, what + ": wrong exception type: " + e.what());
    }
}

// Minimal OBJ reader: "v x y z" and "f a b c ..." (fanned; "7/1/3" and negative indices accepted).
bool load_obj(const std::string &path, std::vector<float> &pos, std::vector<std::uint32_t> &tri) {
    std::ifstream in(path);
    if (!in) return false;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string kind;
        ls >> kind;
        if (kind == "v") {
            float x = 0, y = 0, z = 0;
            ls >> x >> y >> z;
            pos.insert(pos.end(), {x, y, z});
        } else if (kind == "f") {
            std::vector<std::uint32_t> face;
            std::string tok;
            long nv = static_cast<long>(pos.size() / 3);
            while (ls >> tok) {
                long v = std::strtol(tok.c_str(), nullptr, 10);
                face.push_back(static_cast<std::uint32_t>(v < 0 ? v + nv : v - 1));
            }
            for (std::size_t k = 2; k < face.size(); ++k) tri.insert(tri.end(), {face[0], face[k - 1], face[k]});
        }
    }
    return true;
}

// A copy of one query's answers.
struct Answer {
    std::vector<TrocarHit> hits;
    std::vector<float> feedback;
};

Answer raw_answer(const TrocarResults *res, std::uint32_t q) {
    Answer a;
    const TrocarHit *h = nullptr;
    const float *f = nullptr;
    std::uint32_t nh = 0, nf = 0;
    if (c_ok(trocar_results_hits(res, q, &h, &nh), "trocar_results_hits") && nh) a.hits.assign(h, h + nh);
    if (c_ok(trocar_results_feedback(res, q, &f, &nf), "trocar_results_feedback") && nf)
        a.feedback.assign(f, f + 3 * nf);
    return a;
}

Answer wrapped_answer(const trocar::Results &res, std::uint32_t q) {
    Answer a;
    trocar::HitView hv = res.hits(q);
    for (const TrocarHit &h : hv) a.hits.push_back(h);  // begin()/end()
    trocar::FeedbackView fv = res.feedback(q);
    for (trocar::Point3 p : fv) a.feedback.insert(a.feedback.end(), {p[0], p[1], p[2]});
    return a;
}

bool same_answer(const Answer &a, const Answer &b) {
    return a.hits.size() == b.hits.size() && a.feedback == b.feedback &&
           (a.hits.empty() || std::memcmp(a.hits.data(), b.hits.data(), a.hits.size() * sizeof(TrocarHit)) == 0);
}

static_assert(!std::is_copy_constructible<trocar::Context>::value, "Context must be move-only");
static_assert(!std::is_copy_assignable<trocar::Context>::value, "Context must be move-only");
static_assert(std::is_nothrow_move_constructible<trocar::Context>::value, "Context must be movable");
static_assert(!std::is_copy_constructible<trocar::Results>::value, "Results must be move-only");
static_assert(std::is_nothrow_move_assignable<trocar::Results>::value, "Results must be movable");
static_assert(std::is_base_of<std::runtime_error, trocar::Error>::value, "Error is a std::runtime_error");

// Every view member, on an answer the wrapper holds.
void exercise_views(const trocar::Results &res) {
    trocar::HitView empty_hits;
    check(empty_hits.empty() && empty_hits.size() == 0 && empty_hits.data() == nullptr &&
              empty_hits.begin() == empty_hits.end(),
          "default HitView is empty");
    trocar::FeedbackView empty_fb;
    check(empty_fb.empty() && empty_fb.size() == 0 && empty_fb.data() == nullptr && empty_fb.begin() == empty_fb.end(),
          "default FeedbackView is empty");

    trocar::HitView hv = res.hits();
    trocar::FeedbackView fv = res.feedback();
    if (!check(!hv.empty() && !fv.empty(), "exercise_views needs a query with hits and feedback")) return;
    trocar::HitView copy(hv.data(), hv.size());
    check(copy.size() == hv.size() && &copy[0] == hv.data() && &copy.at(hv.size() - 1) == hv.end() - 1,
          "HitView indexing");
    bool threw = false;
    try {
        (void)hv.at(hv.size());
    } catch (const std::out_of_range &) {
        threw = true;
    }
    check(threw, "HitView::at past the end throws std::out_of_range");

    trocar::FeedbackView fcopy(fv.data(), fv.size());
    check(fcopy.size() == fv.size() && fcopy.data() == fv.data(), "FeedbackView copy");
    std::size_t n = 0;
    for (auto it = fv.begin(); it != fv.end(); it++, n++) {  // post-increment
        trocar::Point3 p = *it, q = fv[n];
        if (p != q) break;
    }
    check(n == fv.size(), "FeedbackView iteration visits every vertex and matches operator[]");
    check(static_cast<std::size_t>(std::distance(fv.begin(), fv.end())) == fv.size(), "FeedbackView distance");
    trocar::FeedbackView::iterator raw(fv.data());
    check(raw == fv.begin() && !(raw != fv.begin()) && (++raw) != fv.begin(), "FeedbackView::iterator comparisons");
    std::size_t total = 0;
    for (const TrocarHit &h : hv) {
        trocar::FeedbackView poly = fv.polygon(h);
        total += poly.size();
        check(poly.size() == h.feedback_count &&
                  (h.feedback_count == 0 || poly.data() == fv.data() + 3 * static_cast<std::size_t>(h.feedback_first)),
              "FeedbackView::polygon");
    }
    check(total <= fv.size(), "polygons fit the feedback array");
    TrocarHit bad = hv[0];
    bad.feedback_first = static_cast<std::uint32_t>(fv.size());
    bad.feedback_count = 1;
    threw = false;
    try {
        (void)fv.polygon(bad);
    } catch (const std::out_of_range &) {
        threw = true;
    }
    check(threw, "FeedbackView::polygon out of range throws std::out_of_range");
}

}  // namespace

int main(int argc, char **argv) {
    const std::string data_dir = argc > 1 ? argv[1] : "data";
    const std::string path = data_dir + "/meshes/liver-smooth.obj";
    std::vector<float> rest;
    std::vector<std::uint32_t> tri;
    if (!load_obj(path, rest, tri)) {
        std::printf("cpp_wrapper: cannot open %s; skipped\n", path.c_str());
        return kSkip;
    }
    const std::uint32_t nv = static_cast<std::uint32_t>(rest.size() / 3);
    const std::uint32_t nt = static_cast<std::uint32_t>(tri.size() / 3);
    check(nv == 2194 && nt == 4384, "liver mesh has 2194 vertices and 4384 triangles");

    // Free functions and version checks.
    check(trocar::version() == TROCAR_VERSION, "library version matches the header");
    check(trocar::library_compatible(), "library_compatible()");
    check(trocar::wrapper_major_version == TROCAR_VERSION_MAJOR, "wrapper major version");
    // The ABI rule on explicit versions (library, header): same major and, for 0.x, same minor; any patch.
    check(trocar::abi_compatible(0x000201u, 0x000200u) && trocar::abi_compatible(0x000200u, 0x000209u),
          "abi_compatible: 0.2.x patches");
    check(!trocar::abi_compatible(0x000300u, 0x000200u) && !trocar::abi_compatible(0x000100u, 0x000200u),
          "abi_compatible: another 0.x minor refused");
    check(!trocar::abi_compatible(0x010200u, 0x000200u) && !trocar::abi_compatible(0x000200u, 0x010200u),
          "abi_compatible: another major refused");
    check(trocar::abi_compatible(0x010300u, 0x010200u) && !trocar::abi_compatible(0x020000u, 0x010000u),
          "abi_compatible: 1.x minors kept, majors refused");
    trocar::check_version(trocar::version());  // no throw
    try {
        trocar::check_version(TROCAR_VERSION + 0x100u);  // the next minor
        check(false, "check_version accepted another 0.x minor");
    } catch (const trocar::VersionError &e) {
        const std::string what = e.what();
        check(e.status() == TROCAR_ERROR_INVALID_ARGUMENT && e.library_version() == TROCAR_VERSION + 0x100u &&
                  what.find("same minor") != std::string::npos,
              "check_version's error: " + what);
    }
    check(std::strcmp(trocar::status_name(TROCAR_ERROR_STALE_HANDLE), "TROCAR_ERROR_STALE_HANDLE") == 0,
          "status_name");
    check(trocar::default_query().volume == TROCAR_VOLUME_CAPSULE, "default_query");
    check(trocar::is_null(TrocarMeshId{}) && !trocar::is_null(TrocarMeshId{1, 0, 0}), "is_null");
    trocar::check(TROCAR_OK, "nothing");  // no throw
    expect_error(TROCAR_ERROR_OUT_OF_RANGE, "check(TROCAR_ERROR_OUT_OF_RANGE)",
                 [] { trocar::check(TROCAR_ERROR_OUT_OF_RANGE, "manual"); });
    {
        trocar::Error e(TROCAR_ERROR_PANIC, "what text", "library text");
        check(e.status() == TROCAR_ERROR_PANIC && e.library_message() == "library text" &&
                  std::string(e.what()) == "what text",
              "Error accessors");
    }

    try {
        TrocarContextDef def = trocar::default_context_def();
        def.backend = TROCAR_BACKEND_CPU;
        trocar::Context ctx(def);
        check(static_cast<bool>(ctx) && ctx.get() != nullptr, "Context holds a handle");
        check(ctx.backend() == TROCAR_BACKEND_CPU, "Context::backend");
        std::string dev = ctx.device_name();
        char raw_dev[256];
        trocar_context_device_name(ctx.get(), raw_dev, sizeof raw_dev);
        check(!dev.empty() && dev == raw_dev, "Context::device_name matches the C call: " + dev);

        // The same liver twice: one through the wrapper, one through the C API.
        TrocarMeshId mesh = ctx.create_mesh(rest, tri);
        TrocarMeshId raw_mesh{};
        c_ok(trocar_mesh_create(ctx.get(), rest.data(), nv, tri.data(), nt, &raw_mesh), "trocar_mesh_create");
        check(!trocar::is_null(mesh) && !trocar::same_mesh(mesh, raw_mesh) && trocar::same_mesh(mesh, mesh),
              "distinct mesh ids");
        trocar::MeshCounts mc = ctx.counts(mesh);
        check(mc.vertices == nv && mc.triangles == nt, "Context::counts");

        trocar::Results res(ctx), batch_res(ctx), async_res(ctx), hits_only_res(ctx);
        TrocarResults *raw_res = nullptr;
        c_ok(trocar_results_create(ctx.get(), &raw_res), "trocar_results_create");
        // No batch has run into res yet: the C call's OUT_OF_RANGE, with the library's message.
        expect_error(TROCAR_ERROR_OUT_OF_RANGE, "Results::backend before any batch", [&] { (void)res.backend(); });
        try {
            (void)batch_res.backend();
        } catch (const trocar::Error &e) {
            check(!e.library_message().empty(), "Results::backend's error carries the library's message");
        }

        // Scene: centroid, bounding box, the trocar 8 cm above the liver's top.
        float lo[3] = {rest[0], rest[1], rest[2]}, hi[3] = {rest[0], rest[1], rest[2]}, c[3] = {0, 0, 0};
        for (std::uint32_t i = 0; i < nv; ++i)
            for (std::uint32_t k = 0; k < 3; ++k) {
                float x = rest[3 * i + k];
                lo[k] = std::min(lo[k], x);
                hi[k] = std::max(hi[k], x);
                c[k] += x / static_cast<float>(nv);
            }
        const trocar::Point3 entry{{c[0], hi[1] + 8.0f, c[2]}};
        const float radius = 0.25f;
        std::vector<float> pos(rest.size());
        trocar::Point3 prev_tip{{c[0], hi[1] + 2.0f, c[2]}};
        std::size_t total_hits = 0;
        bool viewed = false;

        for (int step = 0; step < 40; ++step) {
            // Breathing: scale about the centroid, uploaded whole (vector overload) or as two pointer ranges.
            float k = 1.0f + 0.01f * static_cast<float>(std::sin(step));
            for (std::size_t i = 0; i < rest.size(); ++i) pos[i] = c[i % 3] + (rest[i] - c[i % 3]) * k;
            if (step % 2 == 0) {
                ctx.update_positions(mesh, 0, pos);
            } else {
                ctx.update_positions(mesh, 0, pos.data(), nv / 2);
                ctx.update_positions(mesh, nv / 2, pos.data() + 3 * (nv / 2), nv - nv / 2);
            }
            c_ok(trocar_mesh_update_positions(ctx.get(), raw_mesh, 0, pos.data(), nv), "trocar_mesh_update_positions");
            check(ctx.read_positions(mesh) == pos, "read_positions (whole) after update, step " + std::to_string(step));
            std::vector<float> part(30);
            ctx.read_positions(mesh, 5, part.data(), 10);
            check(std::equal(part.begin(), part.end(), pos.begin() + 15), "read_positions (range)");

            // The tip pokes down through the top (steps 0..19), then sweeps left to right below the entry.
            trocar::Point3 tip;
            if (step < 20) {
                tip = {{c[0], hi[1] + 1.0f - 0.25f * static_cast<float>(step), c[2]}};
            } else {
                float t = static_cast<float>(step - 20) / 19.0f;
                tip = {{c[0] - 6.0f + 12.0f * t, 0.5f * (lo[1] + hi[1]), c[2]}};
            }
            TrocarTool tool = trocar::make_tool(entry, prev_tip, radius);
            TrocarTool tool_up = trocar::make_tool(entry, tip, radius, {{0.0f, 0.0f, 1.0f}});

            for (TrocarVolume vol : {TrocarVolume(TROCAR_VOLUME_CAPSULE), TrocarVolume(TROCAR_VOLUME_FRUSTUM)}) {
                std::string tag = " step " + std::to_string(step) + (vol ? " frustum" : " capsule");
                // Static, at the new tip.
                res.query_static(ctx, mesh, tool_up, vol);
                c_ok(trocar_query_static(ctx.get(), raw_mesh, &tool_up, vol, raw_res), "trocar_query_static");
                Answer w = wrapped_answer(res, 0), r = raw_answer(raw_res, 0);
                check(res.query_count() == 1, "query_count after query_static");
                check(res.backend() == TROCAR_BACKEND_CPU, "Results::backend after query_static" + tag);
                check(same_answer(w, r), "static answers differ" + tag);
                total_hits += w.hits.size();
                if (!viewed && !w.hits.empty() && !w.feedback.empty()) {
                    exercise_views(res);
                    viewed = true;
                }
                // Dynamic, from the previous tip to the new one.
                res.query_dynamic(ctx, mesh, tool, tip, vol);
                c_ok(trocar_query_dynamic(ctx.get(), raw_mesh, &tool, tip.data(), vol, raw_res),
                     "trocar_query_dynamic");
                check(same_answer(wrapped_answer(res, 0), raw_answer(raw_res, 0)), "dynamic answers differ" + tag);
                // The tool side: Results::contact is the C call's record.
                TrocarContact wc = res.contact(), rc{};
                c_ok(trocar_results_contact(raw_res, 0, &rc), "trocar_results_contact");
                check(std::memcmp(&wc, &rc, sizeof wc) == 0, "contacts differ" + tag);
                check((wc.triangle == TROCAR_NO_TRIANGLE) == (wc.penetration <= 0.0f), "empty contact" + tag);
            }
            if (step == 0) {  // default volume argument
                res.query_static(ctx, mesh, tool_up);
                c_ok(trocar_query_static(ctx.get(), raw_mesh, &tool_up, TROCAR_VOLUME_CAPSULE, raw_res), "static");
                check(same_answer(wrapped_answer(res, 0), raw_answer(raw_res, 0)), "static (default volume)");
                res.query_dynamic(ctx, mesh, tool, tip);
                c_ok(trocar_query_dynamic(ctx.get(), raw_mesh, &tool, tip.data(), TROCAR_VOLUME_CAPSULE, raw_res),
                     "dynamic");
                check(same_answer(wrapped_answer(res, 0), raw_answer(raw_res, 0)), "dynamic (default volume)");
            }

            // A batch of four queries, via vector and via pointer, and the same submitted asynchronously.
            std::vector<TrocarQuery> qs(4, trocar::default_query()), raw_qs;
            for (std::size_t i = 0; i < qs.size(); ++i) {
                qs[i].mesh = mesh;
                qs[i].tool = i % 2 ? tool : tool_up;
                qs[i].dynamic = i % 2;
                std::copy(tip.begin(), tip.end(), qs[i].new_tip);
                qs[i].volume = i < 2 ? TROCAR_VOLUME_CAPSULE : TROCAR_VOLUME_FRUSTUM;
            }
            raw_qs = qs;
            for (TrocarQuery &q : raw_qs) q.mesh = raw_mesh;
            if (step % 2) batch_res.batch(ctx, qs);
            else batch_res.batch(ctx, qs.data(), static_cast<std::uint32_t>(qs.size()));
            c_ok(trocar_query_batch(ctx.get(), raw_qs.data(), static_cast<std::uint32_t>(raw_qs.size()), raw_res),
                 "trocar_query_batch");
            check(batch_res.query_count() == qs.size(), "batch query_count");
            check(batch_res.backend() == TROCAR_BACKEND_CPU, "Results::backend after a batch on a CPU context");
            for (std::uint32_t i = 0; i < qs.size(); ++i)
                check(same_answer(wrapped_answer(batch_res, i), raw_answer(raw_res, i)),
                      "batch answer " + std::to_string(i) + " differs, step " + std::to_string(step));

            // The same queries from make_query, hits only: the full batch's hits without polygons.
            std::vector<TrocarQuery> hq;
            for (std::size_t i = 0; i < qs.size(); ++i) {
                TrocarQuery q = i % 2 ? trocar::make_query(mesh, qs[i].tool, tip, qs[i].volume, true)
                                      : trocar::make_query(mesh, qs[i].tool, qs[i].volume, true);
                check(trocar::same_mesh(q.mesh, qs[i].mesh) && q.dynamic == qs[i].dynamic &&
                          q.volume == qs[i].volume && q.hits_only == 1 &&
                          std::memcmp(&q.tool, &qs[i].tool, sizeof q.tool) == 0 &&
                          (!q.dynamic || std::memcmp(q.new_tip, qs[i].new_tip, sizeof q.new_tip) == 0),
                      "make_query's fields, query " + std::to_string(i));
                hq.push_back(q);
            }
            hits_only_res.batch(ctx, hq);
            for (std::uint32_t i = 0; i < hq.size(); ++i) {
                Answer h = wrapped_answer(hits_only_res, i), full = wrapped_answer(batch_res, i);
                for (TrocarHit &x : full.hits) x.feedback_first = x.feedback_count = 0;
                full.feedback.clear();
                check(same_answer(h, full), "hits-only answer " + std::to_string(i) + " differs, step " +
                                                std::to_string(step));
            }

            if (step % 2) async_res.submit(ctx, qs);
            else async_res.submit(ctx, qs.data(), static_cast<std::uint32_t>(qs.size()));
            bool was_pending = async_res.pending();  // CPU: the work is done in submit; the batch is still uncollected
            check(async_res.backend() == TROCAR_BACKEND_CPU, "Results::backend of a submitted batch");
            async_res.wait(ctx);
            check(!async_res.pending(), "not pending after wait");
            (void)was_pending;
            for (std::uint32_t i = 0; i < qs.size(); ++i)
                check(same_answer(wrapped_answer(async_res, i), raw_answer(raw_res, i)),
                      "submitted answer " + std::to_string(i) + " differs, step " + std::to_string(step));
            prev_tip = tip;
        }
        check(total_hits > 0 && viewed, "the scenario produced hits");

        // Re-triangulation: drop the last triangle (pointer and vector overloads).
        std::vector<std::uint32_t> fewer(tri.begin(), tri.end() - 3);
        ctx.set_triangles(mesh, fewer);
        check(ctx.counts(mesh).triangles == nt - 1, "set_triangles (vector)");
        ctx.set_triangles(mesh, tri.data(), nt);
        check(ctx.counts(mesh).triangles == nt, "set_triangles (pointer)");

        // Growing: triangle 0 split at its centroid (a vertex appended) under a tracker; the mesh then answers as a
        // new mesh of the same data, its tracker as a new tracker. A refused call changes nothing. Then back to the
        // liver (pointer overload, one vertex fewer).
        {
            std::vector<float> grown(rest);
            std::vector<std::uint32_t> grown_tri(tri);
            const std::uint32_t a = tri[0], b = tri[1], d = tri[2];
            for (std::uint32_t k = 0; k < 3; ++k)
                grown.push_back((rest[3 * a + k] + rest[3 * b + k] + rest[3 * d + k]) / 3.0f);
            grown_tri[2] = nv;
            grown_tri.insert(grown_tri.end(), {b, d, nv, d, a, nv});
            const float *at = &rest[3 * a];
            TrocarTool probe = trocar::make_tool({at[0] + 0.2f, at[1] + 5.0f, at[2]}, {at[0], at[1] - 0.3f, at[2]}, 0.3f);
            trocar::Tracker tracker(ctx, mesh);
            (void)tracker.update(probe);
            ctx.set_topology(mesh, grown, grown_tri);
            check(ctx.counts(mesh).vertices == nv + 1 && ctx.counts(mesh).triangles == nt + 2, "set_topology (vector)");
            expect_error(TROCAR_ERROR_OUT_OF_RANGE, "set_topology with an index past the vertices",
                         [&] { ctx.set_topology(mesh, rest, grown_tri); });
            check(ctx.counts(mesh).vertices == nv + 1, "a refused set_topology changes nothing");
            TrocarMeshId fresh = ctx.create_mesh(grown, grown_tri);
            trocar::Tracker fresh_tracker(ctx, fresh);
            std::vector<TrocarContact> got = tracker.update(probe);
            const std::vector<TrocarContact> &want = fresh_tracker.update(probe);
            check(!got.empty() && got.size() == want.size() &&
                      std::memcmp(got.data(), want.data(), got.size() * sizeof(TrocarContact)) == 0,
                  "a tracker after set_topology answers as a new one");
            trocar::Results fresh_res(ctx);
            res.query_static(ctx, mesh, probe);
            fresh_res.query_static(ctx, fresh, probe);
            check(!res.hits().empty() && same_answer(wrapped_answer(res, 0), wrapped_answer(fresh_res, 0)),
                  "a query after set_topology answers as on a new mesh");
            ctx.destroy_mesh(fresh);
            ctx.set_topology(mesh, rest.data(), nv, tri.data(), nt);
            check(ctx.counts(mesh).vertices == nv && ctx.counts(mesh).triangles == nt, "set_topology (pointer)");
        }

        // Errors: the null id, bad radius, a stale id, the wrapper's own size checks.
        TrocarTool good = trocar::make_tool(entry, prev_tip, radius);
        TrocarTool bad_radius = trocar::make_tool(entry, prev_tip, -1.0f);
        expect_error(TROCAR_ERROR_INVALID_ARGUMENT, "query_static on the null id",
                     [&] { res.query_static(ctx, TrocarMeshId{}, good); });
        expect_error(TROCAR_ERROR_INVALID_ARGUMENT, "counts of the null id", [&] { (void)ctx.counts(TrocarMeshId{}); });
        expect_error(TROCAR_ERROR_INVALID_ARGUMENT, "query_static with radius -1",
                     [&] { res.query_static(ctx, mesh, bad_radius); });
        expect_error(TROCAR_ERROR_INVALID_ARGUMENT, "query_dynamic with radius -1",
                     [&] { res.query_dynamic(ctx, mesh, bad_radius, prev_tip, TROCAR_VOLUME_FRUSTUM); });
        expect_error(TROCAR_ERROR_INVALID_ARGUMENT, "create_mesh with 4 floats",
                     [&] { (void)ctx.create_mesh(std::vector<float>(4, 0.0f), tri); });
        expect_error(TROCAR_ERROR_OUT_OF_RANGE, "read_positions past the end",
                     [&] { ctx.read_positions(mesh, nv, pos.data(), 1); });
        expect_error(TROCAR_ERROR_OUT_OF_RANGE, "hits of query 7 after a single query", [&] {
            res.query_static(ctx, mesh, good);
            (void)res.hits(7);
        });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "contact after the mesh moved", [&] {
            res.query_static(ctx, mesh, good);
            (void)res.contact();
            ctx.update_positions(mesh, 0, pos);
            (void)res.contact();
        });
        try {
            res.query_static(ctx, mesh, bad_radius);
        } catch (const trocar::Error &e) {
            check(!e.library_message().empty() && e.library_message() == trocar::last_error_message() &&
                      std::string(e.what()).find(e.library_message()) != std::string::npos,
                  "Error carries trocar_last_error_message: " + e.library_message());
        }
        TrocarMeshId doomed = ctx.create_mesh(rest.data(), nv, tri.data(), nt);
        ctx.destroy_mesh(doomed);
        expect_error(TROCAR_ERROR_STALE_HANDLE, "query_static on a destroyed mesh",
                     [&] { res.query_static(ctx, doomed, good); });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "update_positions on a destroyed mesh",
                     [&] { ctx.update_positions(doomed, 0, pos); });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "set_triangles on a destroyed mesh",
                     [&] { ctx.set_triangles(doomed, tri); });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "set_topology on a destroyed mesh",
                     [&] { ctx.set_topology(doomed, rest, tri); });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "destroy_mesh twice", [&] { ctx.destroy_mesh(doomed); });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "read_positions of a destroyed mesh",
                     [&] { (void)ctx.read_positions(doomed); });
        std::vector<TrocarQuery> stale(1, trocar::default_query());
        stale[0].mesh = doomed;
        stale[0].tool = good;
        expect_error(TROCAR_ERROR_STALE_HANDLE, "batch on a destroyed mesh", [&] { res.batch(ctx, stale); });
        expect_error(TROCAR_ERROR_STALE_HANDLE, "submit on a destroyed mesh", [&] { res.submit(ctx, stale); });

        // Moves: Results and Context are move-only; a moved-from Results throws NULL_POINTER when queried.
        trocar::Results moved(std::move(res));
        check(!res && static_cast<bool>(moved) && res.get() == nullptr, "Results move construction");
        expect_error(TROCAR_ERROR_NULL_POINTER, "query on a moved-from Results",
                     [&] { res.query_static(ctx, mesh, good); });
        expect_error(TROCAR_ERROR_NULL_POINTER, "backend of a moved-from Results", [&] { (void)res.backend(); });
        check(moved.backend() == TROCAR_BACKEND_CPU, "a moved Results keeps its backend");
        moved.query_static(ctx, mesh, good);
        check(moved.query_count() == 1, "moved Results still works");
        res = std::move(moved);
        check(static_cast<bool>(res) && !moved, "Results move assignment");
        TrocarResults *raw_released = res.release();
        check(raw_released != nullptr && !res, "Results::release");
        trocar_results_destroy(raw_released);

        trocar::Context other(def);
        trocar::Context moved_ctx(std::move(other));
        check(!other && static_cast<bool>(moved_ctx), "Context move construction");
        other = std::move(moved_ctx);
        check(static_cast<bool>(other) && !moved_ctx, "Context move assignment");
        TrocarContext *raw_ctx = other.release();
        check(raw_ctx != nullptr && !other, "Context::release");
        trocar_context_destroy(raw_ctx);
        trocar::Context default_ctx;  // default def: TROCAR_BACKEND_AUTO
        // AUTO: the CPU without a hardware GPU, AUTO when it holds both; its results say which one ran a batch.
        const TrocarBackend auto_backend = default_ctx.backend();
        check(auto_backend == TROCAR_BACKEND_CPU || auto_backend == TROCAR_BACKEND_AUTO,
              "default-constructed Context's backend");
        {
            trocar::Results auto_res(default_ctx);
            expect_error(TROCAR_ERROR_OUT_OF_RANGE, "Results::backend before any batch (AUTO)",
                         [&] { (void)auto_res.backend(); });
            TrocarMeshId auto_mesh = default_ctx.create_mesh(rest, tri);
            auto_res.batch(default_ctx, std::vector<TrocarQuery>(1, trocar::make_query(auto_mesh, good)));
            const TrocarBackend ran = auto_res.backend();
            check(ran == TROCAR_BACKEND_CPU || ran == TROCAR_BACKEND_GPU, "an AUTO batch ran on the CPU or the GPU");
            check(auto_backend != TROCAR_BACKEND_CPU || ran == TROCAR_BACKEND_CPU,
                  "an AUTO context on the CPU runs its batches there");
        }

        trocar_results_destroy(raw_res);
    } catch (const trocar::Error &e) {
        check(false, std::string("unexpected trocar::Error: ") + e.what());
    }

    std::printf("cpp_wrapper: %lu checks, %lu failures\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
