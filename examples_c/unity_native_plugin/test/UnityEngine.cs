// Test-only stand-in for the part of UnityEngine that TrocarToolContact.cs and the test driver use, compiled into
// its own UnityEngine.dll so that the packaged scripts see nothing but these public members, with Unity's names and
// signatures (checked against Unity's scripting reference and UnityCsReference). Not a Unity emulation beyond that:
// a Transform has no parent, Matrix4x4.inverse handles the affine matrices TRS makes, Gizmos and Debug record what
// they are given. The internal PlayerLoop (visible to the driver only) plays the engine's part: it deserializes the
// inspector fields by Unity's serialization rules and sends the lifecycle messages in Unity's order.

using System;
using System.Collections.Generic;
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: InternalsVisibleTo("UnityPluginTest")]

namespace UnityEngine
{
    public struct Vector3
    {
        public float x, y, z;

        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }

        public static Vector3 zero { get { return new Vector3(0f, 0f, 0f); } }
        public static Vector3 right { get { return new Vector3(1f, 0f, 0f); } }
        public static Vector3 up { get { return new Vector3(0f, 1f, 0f); } }
        public static Vector3 forward { get { return new Vector3(0f, 0f, 1f); } }

        public float magnitude { get { return (float)Math.Sqrt(x * x + y * y + z * z); } }

        public Vector3 normalized
        {
            get
            {
                float m = magnitude;
                return m > 1e-5f ? this / m : zero;
            }
        }

        public static float Dot(Vector3 lhs, Vector3 rhs) { return lhs.x * rhs.x + lhs.y * rhs.y + lhs.z * rhs.z; }

        public static Vector3 operator +(Vector3 a, Vector3 b) { return new Vector3(a.x + b.x, a.y + b.y, a.z + b.z); }
        public static Vector3 operator -(Vector3 a, Vector3 b) { return new Vector3(a.x - b.x, a.y - b.y, a.z - b.z); }
        public static Vector3 operator -(Vector3 a) { return new Vector3(-a.x, -a.y, -a.z); }
        public static Vector3 operator *(Vector3 a, float d) { return new Vector3(a.x * d, a.y * d, a.z * d); }
        public static Vector3 operator /(Vector3 a, float d) { return new Vector3(a.x / d, a.y / d, a.z / d); }

        public override string ToString() { return string.Format("({0:F5}, {1:F5}, {2:F5})", x, y, z); }
    }

    public struct Quaternion
    {
        public float x, y, z, w;

        public Quaternion(float x, float y, float z, float w) { this.x = x; this.y = y; this.z = z; this.w = w; }

        public static Quaternion identity { get { return new Quaternion(0f, 0f, 0f, 1f); } }

        /// <summary>Rotation of `angle` degrees about `axis`.</summary>
        public static Quaternion AngleAxis(float angle, Vector3 axis)
        {
            Vector3 n = axis.normalized;
            double half = angle * Math.PI / 360.0;
            float s = (float)Math.Sin(half);
            return new Quaternion(n.x * s, n.y * s, n.z * s, (float)Math.Cos(half));
        }

        public static Vector3 operator *(Quaternion q, Vector3 v)
        {
            // v + 2 w (u x v) + 2 u x (u x v), with u the vector part.
            var u = new Vector3(q.x, q.y, q.z);
            Vector3 t = Cross(u, v) * 2f;
            return v + t * q.w + Cross(u, t);
        }

        static Vector3 Cross(Vector3 a, Vector3 b)
        {
            return new Vector3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
        }
    }

    public struct Matrix4x4 : IEquatable<Matrix4x4>
    {
        public float m00, m10, m20, m30;
        public float m01, m11, m21, m31;
        public float m02, m12, m22, m32;
        public float m03, m13, m23, m33;

        public static Matrix4x4 identity
        {
            get { return new Matrix4x4 { m00 = 1f, m11 = 1f, m22 = 1f, m33 = 1f }; }
        }

        public static Matrix4x4 TRS(Vector3 pos, Quaternion q, Vector3 s)
        {
            Vector3 c0 = q * new Vector3(s.x, 0f, 0f), c1 = q * new Vector3(0f, s.y, 0f), c2 = q * new Vector3(0f, 0f, s.z);
            return new Matrix4x4
            {
                m00 = c0.x, m10 = c0.y, m20 = c0.z,
                m01 = c1.x, m11 = c1.y, m21 = c1.z,
                m02 = c2.x, m12 = c2.y, m22 = c2.z,
                m03 = pos.x, m13 = pos.y, m23 = pos.z, m33 = 1f,
            };
        }

        /// <summary>Stand-in: affine matrices only (what TRS and the Transform make).</summary>
        public Matrix4x4 inverse
        {
            get
            {
                if (m30 != 0f || m31 != 0f || m32 != 0f || m33 != 1f)
                    throw new NotSupportedException("stand-in Matrix4x4.inverse: affine matrices only");
                double a = m00, b = m01, c = m02, d = m10, e = m11, f = m12, g = m20, h = m21, i = m22;
                double det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
                var r = new Matrix4x4
                {
                    m00 = (float)((e * i - f * h) / det), m01 = (float)((c * h - b * i) / det), m02 = (float)((b * f - c * e) / det),
                    m10 = (float)((f * g - d * i) / det), m11 = (float)((a * i - c * g) / det), m12 = (float)((c * d - a * f) / det),
                    m20 = (float)((d * h - e * g) / det), m21 = (float)((b * g - a * h) / det), m22 = (float)((a * e - b * d) / det),
                    m33 = 1f,
                };
                Vector3 t = r.MultiplyVector(new Vector3(m03, m13, m23));
                r.m03 = -t.x;
                r.m13 = -t.y;
                r.m23 = -t.z;
                return r;
            }
        }

        public Vector3 MultiplyPoint3x4(Vector3 point)
        {
            return new Vector3(m00 * point.x + m01 * point.y + m02 * point.z + m03,
                               m10 * point.x + m11 * point.y + m12 * point.z + m13,
                               m20 * point.x + m21 * point.y + m22 * point.z + m23);
        }

        public Vector3 MultiplyVector(Vector3 vector)
        {
            return new Vector3(m00 * vector.x + m01 * vector.y + m02 * vector.z,
                               m10 * vector.x + m11 * vector.y + m12 * vector.z,
                               m20 * vector.x + m21 * vector.y + m22 * vector.z);
        }

        // Exact, element by element, as Unity's (its == compares columns approximately).
        public bool Equals(Matrix4x4 other)
        {
            return m00.Equals(other.m00) && m10.Equals(other.m10) && m20.Equals(other.m20) && m30.Equals(other.m30)
                && m01.Equals(other.m01) && m11.Equals(other.m11) && m21.Equals(other.m21) && m31.Equals(other.m31)
                && m02.Equals(other.m02) && m12.Equals(other.m12) && m22.Equals(other.m22) && m32.Equals(other.m32)
                && m03.Equals(other.m03) && m13.Equals(other.m13) && m23.Equals(other.m23) && m33.Equals(other.m33);
        }

        public override bool Equals(object other) { return other is Matrix4x4 && Equals((Matrix4x4)other); }

        public override int GetHashCode() { return m00.GetHashCode() ^ m11.GetHashCode() ^ m22.GetHashCode() ^ m03.GetHashCode(); }
    }

    public struct Color
    {
        public float r, g, b, a;
        public Color(float r, float g, float b, float a) { this.r = r; this.g = g; this.b = b; this.a = a; }
    }

    [AttributeUsage(AttributeTargets.Field)]
    public sealed class SerializeField : Attribute { }

    public abstract class PropertyAttribute : Attribute { }

    [AttributeUsage(AttributeTargets.Field, Inherited = true, AllowMultiple = false)]
    public class TooltipAttribute : PropertyAttribute
    {
        public readonly string tooltip;
        public TooltipAttribute(string tooltip) { this.tooltip = tooltip; }
    }

    [AttributeUsage(AttributeTargets.Class, Inherited = false)]
    public sealed class DisallowMultipleComponent : Attribute { }

    public sealed class AddComponentMenu : Attribute
    {
        public AddComponentMenu(string menuName) { componentMenu = menuName; }
        public string componentMenu { get; private set; }
    }

    [AttributeUsage(AttributeTargets.Class)]
    public class DefaultExecutionOrder : Attribute
    {
        public DefaultExecutionOrder(int order) { this.order = order; }
        public int order { get; private set; }
    }

    public class Object
    {
        public string name { get; set; }

        public static void DestroyImmediate(Object obj)
        {
            var component = obj as Component;
            if (component != null) component.gameObject.Remove(component);
        }
    }

    public sealed class GameObject : Object
    {
        readonly List<Component> m_components = new List<Component>();

        public GameObject(string name)
        {
            this.name = name;
            transform = Attach(new Transform());
        }

        public Transform transform { get; private set; }

        /// <summary>As in Unity: a MonoBehaviour added to an active GameObject gets Awake and OnEnable at once.</summary>
        public T AddComponent<T>() where T : Component
        {
            T c = Attach((T)Activator.CreateInstance(typeof(T), true));
            var b = c as MonoBehaviour;
            if (b != null) PlayerLoop.Start(b);
            return c;
        }

        public T GetComponent<T>()
        {
            foreach (Component c in m_components)
                if (c is T) return (T)(object)c;
            return default(T);
        }

        internal T Attach<T>(T c) where T : Component
        {
            c.name = name;
            c.gameObject = this;
            m_components.Add(c);
            return c;
        }

        internal void Remove(Component c)
        {
            var b = c as MonoBehaviour;
            if (b != null)
            {
                if (b.enabled) PlayerLoop.Send(b, "OnDisable");
                PlayerLoop.Send(b, "OnDestroy");
            }
            m_components.Remove(c);
        }
    }

    public class Component : Object
    {
        public GameObject gameObject { get; internal set; }
        public Transform transform { get { return gameObject.transform; } }
        public T GetComponent<T>() { return gameObject.GetComponent<T>(); }
    }

    public class Transform : Component
    {
        internal Transform() { }

        public Vector3 position { get; set; }
        public Quaternion rotation { get; set; } = Quaternion.identity;
        public Vector3 localScale { get; set; } = new Vector3(1f, 1f, 1f);

        public Vector3 up { get { return rotation * Vector3.up; } }
        public Matrix4x4 localToWorldMatrix { get { return Matrix4x4.TRS(position, rotation, localScale); } }
        public Matrix4x4 worldToLocalMatrix { get { return localToWorldMatrix.inverse; } }
    }

    public sealed class Mesh : Object
    {
        Vector3[] m_vertices = new Vector3[0];
        int[] m_triangles = new int[0];

        public int vertexCount { get { return m_vertices.Length; } }

        // Unity's getters hand out copies.
        public Vector3[] vertices
        {
            get { return (Vector3[])m_vertices.Clone(); }
            set { m_vertices = (Vector3[])value.Clone(); }
        }

        public int[] triangles
        {
            get { return (int[])m_triangles.Clone(); }
            set
            {
                foreach (int i in value)
                    if (i < 0 || i >= m_vertices.Length) throw new ArgumentException("Mesh.triangles: index out of bounds");
                m_triangles = (int[])value.Clone();
            }
        }

        /// <summary>Fills `vertices` (cleared first) without allocating once its capacity suffices.</summary>
        public void GetVertices(List<Vector3> vertices)
        {
            vertices.Clear();
            for (int i = 0; i < m_vertices.Length; i++) vertices.Add(m_vertices[i]);
        }
    }

    public sealed class MeshFilter : Component
    {
        public Mesh sharedMesh { get; set; }
    }

    public class Behaviour : Component
    {
        bool m_enabled = true;

        /// <summary>As in Unity: enabling sends OnEnable, disabling OnDisable (once the component is awake).</summary>
        public bool enabled
        {
            get { return m_enabled; }
            set
            {
                if (value == m_enabled) return;
                m_enabled = value;
                var b = this as MonoBehaviour;
                if (b != null && b.awake) PlayerLoop.Send(b, value ? "OnEnable" : "OnDisable");
            }
        }
    }

    public class MonoBehaviour : Behaviour
    {
        internal bool awake;
    }

    public enum LogType { Error = 0, Assert = 1, Warning = 2, Log = 3, Exception = 4 }

    public static class Debug
    {
        internal struct Entry
        {
            public LogType type;
            public string message;
            public Object context;
        }

        internal static readonly List<Entry> entries = new List<Entry>();

        public static void LogError(object message, Object context) { Add(LogType.Error, message, context); }
        public static void LogWarning(object message, Object context) { Add(LogType.Warning, message, context); }

        static void Add(LogType type, object message, Object context)
        {
            entries.Add(new Entry { type = type, message = message.ToString(), context = context });
            Console.WriteLine("[{0}] {1}", type, message);
        }
    }

    public static class Gizmos
    {
        internal static readonly List<KeyValuePair<Vector3, Vector3>> lines = new List<KeyValuePair<Vector3, Vector3>>();

        public static Color color { get; set; }

        public static void DrawLine(Vector3 from, Vector3 to) { lines.Add(new KeyValuePair<Vector3, Vector3>(from, to)); }
    }

    /// <summary>The engine's part, for the test driver: scene loading and the messages Unity sends.</summary>
    internal static class PlayerLoop
    {
        /// <summary>Loads a component the way a scene does: the inspector's values go into the serialized fields
        /// (refused unless Unity would serialize the field), then Awake, then OnEnable.</summary>
        internal static T Load<T>(GameObject go, IDictionary<string, object> serialized) where T : MonoBehaviour
        {
            T b = go.Attach((T)Activator.CreateInstance(typeof(T), true));
            foreach (KeyValuePair<string, object> kv in serialized)
            {
                FieldInfo f = typeof(T).GetField(kv.Key, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
                if (f == null) throw new ArgumentException(typeof(T).Name + " has no field " + kv.Key);
                if (!Serialized(f)) throw new ArgumentException(typeof(T).Name + "." + kv.Key + " is not serialized by Unity");
                f.SetValue(b, kv.Value);
            }
            Start(b);
            return b;
        }

        /// <summary>Unity's rules: public or [SerializeField], not static, const or readonly, of a serializable type.</summary>
        internal static bool Serialized(FieldInfo f)
        {
            if (f.IsStatic || f.IsLiteral || f.IsInitOnly) return false;
            if (!f.IsPublic && f.GetCustomAttributes(typeof(SerializeField), false).Length == 0) return false;
            Type t = f.FieldType;
            if (t.IsEnum) return Type.GetTypeCode(Enum.GetUnderlyingType(t)) <= TypeCode.UInt32;
            return t.IsPrimitive || t == typeof(string) || t == typeof(Vector3) || t == typeof(Color)
                || typeof(Object).IsAssignableFrom(t);
        }

        internal static void Start(MonoBehaviour b)
        {
            Send(b, "Awake");
            b.awake = true;
            if (b.enabled) Send(b, "OnEnable");
        }

        internal static void Send(MonoBehaviour b, string message)
        {
            Action a = Bind(b, message);
            if (a != null) a();
        }

        /// <summary>The message's method as a delegate (null if the script has none), for calling it repeatedly.</summary>
        internal static Action Bind(MonoBehaviour b, string message)
        {
            MethodInfo m = b.GetType().GetMethod(message, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic,
                                                 null, Type.EmptyTypes, null);
            return m == null ? null : (Action)Delegate.CreateDelegate(typeof(Action), b, m);
        }
    }
}
