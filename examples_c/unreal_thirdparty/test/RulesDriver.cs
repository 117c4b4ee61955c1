// Instantiates trocar.Build.cs (compiled alone into RULES_DLL against the UnrealBuildTool stand-in) the way UBT
// does, and checks what it asks for:
//   - for this machine's platform, on the staged MODULE_DIR: an external module whose include paths, libraries
//     and runtime dependencies all exist, the runtime dependencies copied to $(BinaryOutputDir), nothing
//     delay-loaded, WITH_TROCAR=1; the lists go to OUT_DIR (includes.txt, libraries.txt, definitions.txt, and
//     runtime.txt as "destination<TAB>source" with $(BinaryOutputDir) = BINARY_DIR) for run_test.sh to build and
//     run a module against exactly them;
//   - for Win64, Mac and the other Linux architecture, on a scratch module directory holding placeholder files named
//     as cargo names its outputs: the import library, the delay-loaded DLL and the files staged next to the binary;
//   - for Android (no library): WITH_TROCAR=0 and no library; and a missing library named in the error.
// Usage: mono RulesDriver.exe RULES_DLL MODULE_DIR BINARY_DIR OUT_DIR Linux|LinuxArm64   (this machine's platform)
// Exit status: 0 all checks passed, 1 otherwise.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using UnrealBuildTool;

static class RulesDriver
{
    const string BinaryOutputDir = "$(BinaryOutputDir)";
    static int s_checks, s_failures;

    static bool Check(bool ok, string fmt, params object[] args)
    {
        s_checks++;
        if (!ok)
        {
            s_failures++;
            Console.WriteLine("FAIL: " + string.Format(fmt, args));
        }
        return ok;
    }

    static int Main(string[] args)
    {
        Type rules = Assembly.LoadFrom(args[0]).GetTypes().SingleOrDefault(t => t.Name == "trocar");
        if (!Check(rules != null && rules.IsSubclassOf(typeof(ModuleRules)), "{0} has no ModuleRules subclass named trocar", args[0]))
            return 1;
        string module = Path.GetFullPath(args[1]), bin = Path.GetFullPath(args[2]), output = args[3];
        string header = Path.Combine(module, "include", "trocar.h");
        string[] lines = File.ReadAllLines(header);
        string major = lines.Single(l => l.StartsWith("#define TROCAR_VERSION_MAJOR ")).Split(' ')[2];
        // The soname's ABI version: 0.<minor> while the major is 0, else the major.
        string abi = major != "0" ? major : "0." + lines.Single(l => l.StartsWith("#define TROCAR_VERSION_MINOR ")).Split(' ')[2];

        bool arm = args[4] == "LinuxArm64";
        UnrealTargetPlatform host = arm ? UnrealTargetPlatform.LinuxArm64 : UnrealTargetPlatform.Linux;
        UnrealTargetPlatform other = arm ? UnrealTargetPlatform.Linux : UnrealTargetPlatform.LinuxArm64;
        string hostArch = arm ? "LinuxArm64/aarch64-unknown-linux-gnueabi" : "Linux/x86_64-unknown-linux-gnu";
        string otherArch = arm ? "Linux/x86_64-unknown-linux-gnu" : "LinuxArm64/aarch64-unknown-linux-gnueabi";

        ModuleRules r = ModuleRules.Create(rules, module, host);
        Check(r.Type == ModuleRules.ModuleType.External, "{0}: Type is {1}, not External", host, r.Type);
        Check(r.PublicSystemIncludePaths.Any(p => File.Exists(Path.Combine(p, "trocar.h"))),
              "{0}: no include path holds trocar.h", host);
        foreach (string p in r.PublicSystemIncludePaths) Check(Directory.Exists(p), "{0}: include path {1} does not exist", host, p);
        Check(r.PublicAdditionalLibraries.Count > 0, "{0}: no library", host);
        foreach (string p in r.PublicAdditionalLibraries) Check(File.Exists(p), "{0}: library {1} does not exist", host, p);
        Check(r.PublicAdditionalLibraries.SequenceEqual(new[] { Path.Combine(module, "lib", hostArch, "libtrocar.so") }),
              "{0}: libraries {1}", host, string.Join(", ", r.PublicAdditionalLibraries));
        Check(r.PublicDelayLoadDLLs.Count == 0, "{0}: delay-loads {1}", host, string.Join(", ", r.PublicDelayLoadDLLs));
        Check(r.PublicDefinitions.Contains("WITH_TROCAR=1"), "{0}: no WITH_TROCAR=1", host);
        Check(r.ExternalDependencies.Contains(header), "{0}: the header is not an external dependency", host);
        var runtime = new List<string>();
        foreach (ModuleRules.RuntimeDependency d in r.RuntimeDependencies.Inner)
        {
            Check(d.SourcePath != null && File.Exists(d.SourcePath), "{0}: runtime dependency {1} has no source file", host, d.Path);
            Check(d.Path.StartsWith(BinaryOutputDir + "/"), "{0}: runtime dependency {1} is not staged next to the binary", host, d.Path);
            Check(d.Type == StagedFileType.NonUFS, "{0}: runtime dependency {1} staged as {2}", host, d.Path, d.Type);
            runtime.Add(d.Path.Replace(BinaryOutputDir, bin) + "\t" + d.SourcePath);
        }
        Check(runtime.Count == 1 && runtime[0].StartsWith(Path.Combine(bin, "libtrocar.so." + abi) + "\t"),
              "{0}: runtime dependencies {1}, expected the library as libtrocar.so.{2}", host, string.Join("; ", runtime), abi);

        Directory.CreateDirectory(output);
        File.WriteAllLines(Path.Combine(output, "includes.txt"), r.PublicSystemIncludePaths);
        File.WriteAllLines(Path.Combine(output, "libraries.txt"), r.PublicAdditionalLibraries);
        File.WriteAllLines(Path.Combine(output, "definitions.txt"), r.PublicDefinitions);
        File.WriteAllLines(Path.Combine(output, "runtime.txt"), runtime);

        OtherPlatforms(rules, header, abi, output, other, otherArch);
        Console.WriteLine("RulesDriver: {0} checks, {1} failures", s_checks, s_failures);
        return s_failures == 0 ? 0 : 1;
    }

    // The other platforms' branches, on placeholders named as cargo names its outputs for them.
    static void OtherPlatforms(Type rules, string header, string abi, string output, UnrealTargetPlatform other,
                               string otherArch)
    {
        string fake = Path.Combine(Path.GetFullPath(output), "fake_module");
        if (Directory.Exists(fake)) Directory.Delete(fake, true);
        Directory.CreateDirectory(Path.Combine(fake, "include"));
        File.Copy(header, Path.Combine(fake, "include", "trocar.h"));

        // Before the placeholders exist: the missing file is named, with the way to make it.
        try
        {
            ModuleRules.Create(rules, fake, UnrealTargetPlatform.Win64);
            Check(false, "Win64 without its library: no error");
        }
        catch (FileNotFoundException e)
        {
            Check(e.Message.Contains("trocar.dll.lib") && e.Message.Contains("stage.sh"), "Win64 without its library: {0}", e.Message);
        }

        string lib = Path.Combine(fake, "lib");
        foreach (string f in new[] { "Win64/trocar.dll", "Win64/trocar.dll.lib", "Mac/libtrocar.dylib", otherArch + "/libtrocar.so" })
        {
            Directory.CreateDirectory(Path.GetDirectoryName(Path.Combine(lib, f)));
            File.WriteAllText(Path.Combine(lib, f), "placeholder");
        }

        ModuleRules w = ModuleRules.Create(rules, fake, UnrealTargetPlatform.Win64);
        Expect(w, "Win64", new[] { Path.Combine(lib, "Win64", "trocar.dll.lib") }, new[] { "trocar.dll" },
               BinaryOutputDir + "/trocar.dll", Path.Combine(lib, "Win64", "trocar.dll"));
        ModuleRules m = ModuleRules.Create(rules, fake, UnrealTargetPlatform.Mac);
        Expect(m, "Mac", new[] { Path.Combine(lib, "Mac", "libtrocar.dylib") }, new string[0],
               BinaryOutputDir + "/libtrocar.dylib", Path.Combine(lib, "Mac", "libtrocar.dylib"));
        ModuleRules o = ModuleRules.Create(rules, fake, other);
        Expect(o, other.ToString(), new[] { Path.Combine(lib, otherArch, "libtrocar.so") }, new string[0],
               BinaryOutputDir + "/libtrocar.so." + abi, Path.Combine(lib, otherArch, "libtrocar.so"));

        ModuleRules a = ModuleRules.Create(rules, fake, UnrealTargetPlatform.Android);
        Check(a.PublicDefinitions.SequenceEqual(new[] { "WITH_TROCAR=0" }) && a.PublicAdditionalLibraries.Count == 0
              && a.RuntimeDependencies.Inner.Count == 0 && a.PublicSystemIncludePaths.Count == 1,
              "Android: definitions {0}, {1} libraries, {2} runtime dependencies", string.Join(", ", a.PublicDefinitions),
              a.PublicAdditionalLibraries.Count, a.RuntimeDependencies.Inner.Count);
    }

    static void Expect(ModuleRules r, string platform, string[] libraries, string[] delayLoad, string runtimePath,
                       string runtimeSource)
    {
        Check(r.Type == ModuleRules.ModuleType.External, "{0}: not External", platform);
        Check(r.PublicAdditionalLibraries.SequenceEqual(libraries), "{0}: libraries {1}", platform,
              string.Join(", ", r.PublicAdditionalLibraries));
        Check(r.PublicDelayLoadDLLs.SequenceEqual(delayLoad), "{0}: delay-loaded {1}", platform, string.Join(", ", r.PublicDelayLoadDLLs));
        Check(r.PublicDefinitions.SequenceEqual(new[] { "WITH_TROCAR=1" }), "{0}: definitions {1}", platform,
              string.Join(", ", r.PublicDefinitions));
        IReadOnlyList<ModuleRules.RuntimeDependency> deps = r.RuntimeDependencies.Inner;
        Check(deps.Count == 1 && deps[0].Path == runtimePath && deps[0].SourcePath == runtimeSource,
              "{0}: runtime dependencies {1}", platform, string.Join("; ", deps.Select(d => d.Path + " <- " + d.SourcePath)));
    }
}
