// Test-only stand-in for the part of UnrealBuildTool (UE5) that trocar.Build.cs uses, compiled into its own
// UnrealBuildTool.dll so the rules see nothing else: the same namespace, type names and member signatures as UE5's
// ModuleRules.cs, UnrealTargetPlatform.cs and StagedFileType, with none of their machinery. The internal part
// (visible to RulesDriver only) does what UBT's RulesAssembly does before a rules constructor runs: it sets the
// module's directory, then calls the constructor on that object.

using System;
using System.Collections.Generic;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Runtime.Serialization;

[assembly: InternalsVisibleTo("RulesDriver")]

namespace UnrealBuildTool
{
    public enum StagedFileType { UFS, NonUFS, DebugNonUFS, SystemNonUFS }

    public partial struct UnrealTargetPlatform
    {
        readonly string Name;

        UnrealTargetPlatform(string InName) { Name = InName; }

        public static bool operator ==(UnrealTargetPlatform A, UnrealTargetPlatform B) { return A.Name == B.Name; }
        public static bool operator !=(UnrealTargetPlatform A, UnrealTargetPlatform B) { return A.Name != B.Name; }
        public override bool Equals(object B) { return B is UnrealTargetPlatform && this == (UnrealTargetPlatform)B; }
        public override int GetHashCode() { return Name.GetHashCode(); }
        public override string ToString() { return Name; }

        public static UnrealTargetPlatform Win64 = new UnrealTargetPlatform("Win64");
        public static UnrealTargetPlatform Mac = new UnrealTargetPlatform("Mac");
        public static UnrealTargetPlatform IOS = new UnrealTargetPlatform("IOS");
        public static UnrealTargetPlatform Android = new UnrealTargetPlatform("Android");
        public static UnrealTargetPlatform Linux = new UnrealTargetPlatform("Linux");
        public static UnrealTargetPlatform LinuxArm64 = new UnrealTargetPlatform("LinuxArm64");
    }

    public partial class ReadOnlyTargetRules
    {
        internal ReadOnlyTargetRules(UnrealTargetPlatform InPlatform) { Platform = InPlatform; }

        public UnrealTargetPlatform Platform { get; private set; }
    }

    public class ModuleRules
    {
        public enum ModuleType { CPlusPlus, External }

        [Serializable]
        public class RuntimeDependency
        {
            public string Path { get; private set; }
            public string SourcePath { get; private set; }
            public StagedFileType Type { get; private set; }

            public RuntimeDependency(string InPath, StagedFileType InType = StagedFileType.NonUFS)
            {
                Path = InPath;
                Type = InType;
            }

            public RuntimeDependency(string InPath, string InSourcePath, StagedFileType InType = StagedFileType.NonUFS)
            {
                Path = InPath;
                SourcePath = InSourcePath;
                Type = InType;
            }
        }

        [Serializable]
        public class RuntimeDependencyList
        {
            readonly List<RuntimeDependency> _inner = new List<RuntimeDependency>();

            internal IReadOnlyList<RuntimeDependency> Inner { get { return _inner.AsReadOnly(); } }

            public void Add(string InPath) { _inner.Add(new RuntimeDependency(InPath)); }
            public void Add(string InPath, StagedFileType InType) { _inner.Add(new RuntimeDependency(InPath, InType)); }

            public void Add(string InPath, string InSourcePath, StagedFileType InType = StagedFileType.NonUFS)
            {
                _inner.Add(new RuntimeDependency(InPath, InSourcePath, InType));
            }
        }

        public ModuleRules(ReadOnlyTargetRules Target) { this.Target = Target; }

        public ReadOnlyTargetRules Target { get; private set; }
        public ModuleType Type { get; set; }

        // Set by RulesDriver before the constructor runs, as UBT's RulesAssembly sets Directory.
        internal string Directory;
        public string ModuleDirectory { get { return Directory; } }

        public List<string> PublicSystemIncludePaths = new List<string>();
        public List<string> PublicAdditionalLibraries = new List<string>();
        public List<string> PublicDelayLoadDLLs = new List<string>();
        public List<string> PublicDefinitions = new List<string>();
        public RuntimeDependencyList RuntimeDependencies = new RuntimeDependencyList();
        public List<string> ExternalDependencies = new List<string>();

        /// <summary>What UBT does: an uninitialized object, its directory, then the rules' constructor on it.</summary>
        internal static ModuleRules Create(Type RulesType, string ModuleDir, UnrealTargetPlatform Platform)
        {
            var Rules = (ModuleRules)FormatterServices.GetUninitializedObject(RulesType);
            Rules.Directory = ModuleDir;
            ConstructorInfo Constructor = RulesType.GetConstructor(new[] { typeof(ReadOnlyTargetRules) });
            if (Constructor == null) throw new MissingMethodException(RulesType.Name + " has no (ReadOnlyTargetRules) constructor");
            try
            {
                Constructor.Invoke(Rules, new object[] { new ReadOnlyTargetRules(Platform) });
            }
            catch (TargetInvocationException e)
            {
                ExceptionDispatchInfo.Capture(e.InnerException).Throw();
            }
            return Rules;
        }
    }
}
