"""Capability discovery: per-turn, token-budgeted context from tools, skills and manifests."""

from ocnb.discovery.assembler import Budgets, DiscoveryResult, Tier1Entry
from ocnb.discovery.descriptors import (
    CapabilityDescriptor,
    ManifestError,
    from_manifest,
    from_skills,
    from_tooldefs,
)
from ocnb.discovery.engine import DiscoveryEngine
from ocnb.discovery.manifests import ManifestWarning, manifest_roots
from ocnb.discovery.retrievers import (
    MINILM_INSTALL,
    BM25Retriever,
    HybridRetriever,
    MiniLMRetriever,
    Retriever,
    StaticEmbeddingRetriever,
    default_retriever,
    retriever_info,
)

__all__ = [
    "MINILM_INSTALL",
    "BM25Retriever",
    "Budgets",
    "CapabilityDescriptor",
    "DiscoveryEngine",
    "DiscoveryResult",
    "HybridRetriever",
    "ManifestError",
    "ManifestWarning",
    "MiniLMRetriever",
    "Retriever",
    "StaticEmbeddingRetriever",
    "Tier1Entry",
    "default_retriever",
    "from_manifest",
    "from_skills",
    "from_tooldefs",
    "manifest_roots",
    "retriever_info",
]
