//! The rigid surgical tool: a cylinder of radius `s` from the entry point `P0` (the trocar) to the tip `P`.

use super::{MAX_COORDINATE, in_range};
use crate::error::{Error, Result};
use glam::Vec3;

/// A tool pose: entry point, tip, radius, and the roll of its square section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tool {
    /// `P0`, the fixed point where the tool crosses the abdominal wall.
    pub entry: Vec3,
    /// `P`, the tool's active extremity.
    pub tip: Vec3,
    /// `s`, the tool's radius.
    pub radius: f32,
    /// Fixes the roll of the frustum volume's square section, as gluLookAt's `up`.
    pub up: Vec3,
}

impl Tool {
    /// Checks that the pose describes a real tool: finite, positive radius, tip distinct from the entry point.
    /// A refusal names the field at fault, as `tool.tip.y is not finite (NaN)`.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [("tool.entry", self.entry), ("tool.tip", self.tip)] {
            check_point(name, v)?;
        }
        if let Some(e) = not_finite("tool.up", self.up) {
            return Err(e);
        }
        if !self.radius.is_finite() {
            return Err(Error::invalid(format!(
                "tool.radius is not finite ({})",
                self.radius
            )));
        }
        if !(self.radius > 0.0 && self.radius <= MAX_COORDINATE) {
            return Err(Error::invalid(format!(
                "tool.radius must be > 0 and <= {MAX_COORDINATE} (got {})",
                self.radius
            )));
        }
        if (self.tip - self.entry).length() <= f32::EPSILON * self.entry.abs().max_element() {
            return Err(Error::invalid("tool.tip equals tool.entry"));
        }
        Ok(())
    }

    /// Length of the tool inside the body, `|P - P0|`.
    pub fn length(&self) -> f32 {
        (self.tip - self.entry).length()
    }
}

/// Checks the tip position a dynamic query moves to (named `new_tip`, as in the C API).
pub fn validate_new_tip(new_tip: Vec3) -> Result<()> {
    check_point("new_tip", new_tip)
}

/// Refuses a point with a component that is not finite or lies beyond ±[`MAX_COORDINATE`], naming the
/// component (`name.x`, `name.y` or `name.z`).
fn check_point(name: &str, v: Vec3) -> Result<()> {
    if in_range(v.to_array()) {
        return Ok(());
    }
    if let Some(e) = not_finite(name, v) {
        return Err(e);
    }
    let (axis, c) = component(v, |c| c.abs() > MAX_COORDINATE);
    Err(Error::invalid(format!(
        "{name}.{axis} must lie within ±{MAX_COORDINATE} (got {c})"
    )))
}

/// The error naming `v`'s first component that is not finite, if any.
fn not_finite(name: &str, v: Vec3) -> Option<Error> {
    if v.is_finite() {
        return None;
    }
    let (axis, c) = component(v, |c| !c.is_finite());
    Some(Error::invalid(format!("{name}.{axis} is not finite ({c})")))
}

/// The first component of `v` for which `bad` holds, with its name; `z` when none does (callers have found one).
fn component(v: Vec3, bad: impl Fn(f32) -> bool) -> (&'static str, f32) {
    ["x", "y", "z"]
        .into_iter()
        .zip(v.to_array())
        .find(|&(_, c)| bad(c))
        .unwrap_or(("z", v.z))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> Tool {
        Tool {
            entry: Vec3::ZERO,
            tip: Vec3::Z,
            radius: 0.1,
            up: Vec3::Y,
        }
    }

    #[test]
    fn rejects_bad_poses() {
        assert!(tool().validate().is_ok());
        for radius in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(Tool { radius, ..tool() }.validate().is_err());
        }
        assert!(
            Tool {
                tip: Vec3::ZERO,
                ..tool()
            }
            .validate()
            .is_err()
        );
        let nan = Vec3::new(f32::NAN, 0.0, 0.0);
        assert!(
            Tool {
                entry: nan,
                ..tool()
            }
            .validate()
            .is_err()
        );
        assert!(Tool { up: nan, ..tool() }.validate().is_err());
    }

    /// A refusal names the field at fault, down to the component.
    #[test]
    fn refusals_name_the_field() {
        let message = |t: Tool| t.validate().unwrap_err().message;
        let mut t = tool();
        t.tip.y = f32::NAN;
        assert_eq!(message(t), "tool.tip.y is not finite (NaN)");
        let mut t = tool();
        t.entry.z = f32::INFINITY;
        assert_eq!(message(t), "tool.entry.z is not finite (inf)");
        let mut t = tool();
        t.up.x = f32::NEG_INFINITY;
        assert_eq!(message(t), "tool.up.x is not finite (-inf)");
        let mut t = tool();
        t.entry.x = 2.0 * MAX_COORDINATE;
        assert!(message(t).starts_with("tool.entry.x must lie within"));
        t = Tool {
            radius: f32::NAN,
            ..tool()
        };
        assert_eq!(message(t), "tool.radius is not finite (NaN)");
        t.radius = -1.0;
        assert!(message(t).starts_with("tool.radius must be > 0"));
        t = Tool {
            tip: Vec3::ZERO,
            ..tool()
        };
        assert_eq!(message(t), "tool.tip equals tool.entry");
        let new_tip = |v: Vec3| validate_new_tip(v).unwrap_err().message;
        assert_eq!(
            new_tip(Vec3::new(0.0, 0.0, f32::NAN)),
            "new_tip.z is not finite (NaN)"
        );
        assert!(new_tip(Vec3::new(0.0, -2.0e6, 0.0)).starts_with("new_tip.y must lie within"));
        assert!(validate_new_tip(Vec3::ONE).is_ok());
    }
}
