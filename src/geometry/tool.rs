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
    pub fn validate(&self) -> Result<()> {
        if !(self.entry.is_finite() && self.tip.is_finite() && self.up.is_finite()) {
            return Err(Error::invalid("tool entry, tip and up must be finite"));
        }
        if !(in_range(self.entry.to_array()) && in_range(self.tip.to_array())) {
            return Err(Error::invalid(format!(
                "tool entry and tip must lie within ±{MAX_COORDINATE}"
            )));
        }
        if !(self.radius > 0.0 && self.radius <= MAX_COORDINATE) {
            return Err(Error::invalid(format!(
                "tool radius must be > 0 and <= {MAX_COORDINATE} (got {})",
                self.radius
            )));
        }
        if (self.tip - self.entry).length() <= f32::EPSILON * self.entry.abs().max_element() {
            return Err(Error::invalid("tool tip equals its entry point"));
        }
        Ok(())
    }

    /// Length of the tool inside the body, `|P - P0|`.
    pub fn length(&self) -> f32 {
        (self.tip - self.entry).length()
    }
}

/// Checks the tip position a dynamic query moves to.
pub fn validate_new_tip(new_tip: Vec3) -> Result<()> {
    if !new_tip.is_finite() {
        Err(Error::invalid("new tip must be finite"))
    } else if !in_range(new_tip.to_array()) {
        Err(Error::invalid(format!(
            "new tip must lie within ±{MAX_COORDINATE}"
        )))
    } else {
        Ok(())
    }
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
}
