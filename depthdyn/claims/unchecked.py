"""Statements of the sources that no claim checks, each with the reason.

Together with the claims (one source statement per :attr:`~depthdyn.claims.base.Claim.statement_key`)
this table is the catalogue of the sources' mathematical statements, worked numbers, table
summaries and code listings: :func:`depthdyn.claims.coverage` counts both, and the report
prints this table so that a reader sees what was left out and why.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Unchecked", "NOT_CHECKED"]


@dataclass(frozen=True)
class Unchecked:
    """A source statement that is not checked: ``key`` (unique), source key, section, what it says, why not."""

    key: str
    source: str
    section: str
    statement: str
    reason: str

    def to_json(self) -> dict:
        return {"key": self.key, "source": self.source, "section": self.section, "statement": self.statement,
                "reason": self.reason}


_EXPERIMENT = "an experimental result: no computation can decide it"
_TRAINED = "experimental; `depthdyn verify --trained` checks what a small CPU run can (see docs/nn.md)"

NOT_CHECKED: tuple[Unchecked, ...] = (
    Unchecked("000-s5-lstm-table", "000", "§5 table", "the LSTM <-> second-order residual correspondence "
              "(cell state <-> velocity, forget gate <-> carry m, ...)", "an analogy between names, not a "
              "statement with a truth value; the structural part (a gated carry plus injection) is 000-s2-*"),
    Unchecked("000-s7-architecture-table", "000", "§7 table", "RNNs, LSTMs, linear attention and state-space "
              "models as recurrence types", "a classification without equations for the architectures named"),
    Unchecked("000-s8-diagnostics", "000", "§8", "the norm profile is smoother, cos-similarity flips less and "
              "gradients are more uniform in the second-order model", _TRAINED),
    Unchecked("001-table-values", "001", "Tables 1-5", "the accuracies themselves (means and deviations of "
              "the runs)", _EXPERIMENT + "; every sentence that summarises them is a claim (001-s3.3-*, "
              "001-s4.*, 001-fig2-*, 001-app-*, 001-table1-deviations)"),
    Unchecked("001-s4-setup", "001", "§4.1-4.3", "training set-ups (epochs, learning rates, weight decay "
              "1/32768, batch sizes, data sizes)", "settings of the experiments, not statements to verify"),
    Unchecked("001-s4.1-figures", "001", "§4.1, Fig. 5, 6", "feature visualisations and saliency maps: "
              "spatial entanglement preserves the features, channel-wise alters them", "the images are not in "
              "the text"),
    Unchecked("001-eq10-taylor", "001", "§3.3, eq. 9, 10", "the first-order Taylor expansion of the loss over "
              "the residual blocks (Jastrzebski et al.)", "a cited result whose printed form is garbled "
              "('dL(x_j)/x_j'); Lemma 1, which the section derives from it, is checked (001-lemma1-*)"),
    Unchecked("001-limitations", "001", "§5 limitations", "the performance gain of entangled mappings is "
              "marginal", "no threshold for 'marginal' is given; the gains are in the Tables claims"),
    Unchecked("001-table2-others", "001", "Table 2", "kernel orthogonality (Xie et al.) and OCNN accuracies",
              "other papers' numbers, quoted"),
    Unchecked("002-s4-experiments", "002", "§4.1-4.3", "C^1 cannot and C^k (k > 1) can separate the data; "
              "perturbation ratios 0.0389 and 1.31", _TRAINED),
    Unchecked("002-s3-manifolds", "002", "§1, §3", "data manifolds in the plane can pass over each other in a "
              "higher-dimensional embedding", "a topological picture without a statement to compute; the "
              "dimension count it rests on is 002-s2-dimension"),
    Unchecked("003-ch4-bundle", "003", "ch. 4", "the fibre-bundle view of hyper-connections", "the chapter is "
              "unfinished in the note: definitions only, no statement"),
    Unchecked("003-prop3.3-paths", "003", "Proposal 3.3 remark", "the network's behaviour is determined by "
              "its layers' transformations (path category)", "a remark without a checkable statement"),
    Unchecked("004-history", "004", "history", "ResNet won ImageNet 2015 with 152 layers, up from ~20; "
              "pre-norm became the default from GPT-2 on", "historical statements"),
    Unchecked("004-uses", "004", "uses, alternatives table", "where residual connections are used; DenseNet's "
              "memory cost, highway networks' lack of benefit, no skip below 5 layers", "survey statements "
              "about practice, not mathematics"),
    Unchecked("004-torch-listing", "004", "PyTorch code", "ResidualBlock and ResidualBlockWithProjection "
              "return x + mlp(norm(x)) and block(x) + shortcut(x)", "needs the optional torch extra; the "
              "numpy twin is run in 004-numpy-listing-shapes and the projection's Jacobian is "
              "004-projection-jacobian"),
    Unchecked("004-prenorm-stability", "004", "pre-norm", "pre-norm is more stable for very deep networks "
              "because the residual stream is not repeatedly normalised", _EXPERIMENT),
)
